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
    /// The plain form is tried first; if neither form matches, the error describes both attempts.
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
