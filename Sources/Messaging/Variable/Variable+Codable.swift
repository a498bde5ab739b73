extension Variable: Encodable where Value: Encodable {
    /// Encodes the variable as its plain value, so a model with `Var` properties encodes like one
    /// with plain properties.
    ///
    /// ```swift
    /// struct Model: Codable { var text = Var("hi") }
    /// // encodes as {"text":"hi"}
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

extension Variable: Decodable where Value: Decodable {
    /// Decodes a variable from its plain value, or from SwiftObserver's keyed form
    /// `{"storedValue": value}`.
    ///
    /// The plain form is tried first, so a value that is itself keyed and happens to decode from
    /// `{"storedValue": …}` (a dictionary, or a struct whose properties are all optional) is read
    /// as a plain value. If neither form matches, the plain form's error is thrown.
    public convenience init(from decoder: any Decoder) throws {
        do {
            self.init(try decoder.singleValueContainer().decode(Value.self))
        } catch let plainError {
            guard let keyed = try? decoder.container(keyedBy: SwiftObserverKeys.self),
                keyed.contains(.storedValue)
            else { throw plainError }
            self.init(try keyed.decode(Value.self, forKey: .storedValue))
        }
    }
}

/// The key SwiftObserver encoded a variable's value under.
private enum SwiftObserverKeys: String, CodingKey {
    case storedValue
}

// A `nil` optional property is left out of a keyed container, and a missing key decodes as
// `nil`. Synthesized `Codable` does that for plain optionals through `encodeIfPresent` and
// `decodeIfPresent`; these more specific overloads, picked by synthesized code, make optional
// variables (and `@ObservableVar` optionals) behave the same, so a model encodes alike with or
// without them.

extension KeyedEncodingContainer {
    /// Encodes an optional variable's value, leaving the key out when the value is `nil`.
    public mutating func encode<Wrapped: Encodable>(
        _ variable: Variable<Wrapped?>, forKey key: Key
    ) throws {
        try encodeIfPresent(variable.value, forKey: key)
    }

    /// Encodes an optional observable property's value, leaving the key out when it is `nil`.
    public mutating func encode<Wrapped: Encodable>(
        _ property: ObservableVar<Wrapped?>, forKey key: Key
    ) throws {
        try encodeIfPresent(property.wrappedValue, forKey: key)
    }
}

extension KeyedDecodingContainer {
    /// Decodes an optional variable; a missing key or `null` gives a variable holding `nil`.
    public func decode<Wrapped: Decodable>(
        _ type: Variable<Wrapped?>.Type, forKey key: Key
    ) throws -> Variable<Wrapped?> {
        try decodeIfPresent(type, forKey: key) ?? Variable(nil)
    }

    /// Decodes an optional observable property; a missing key or `null` gives `nil`.
    public func decode<Wrapped: Decodable>(
        _ type: ObservableVar<Wrapped?>.Type, forKey key: Key
    ) throws -> ObservableVar<Wrapped?> {
        try decodeIfPresent(type, forKey: key) ?? ObservableVar(wrappedValue: nil)
    }
}
