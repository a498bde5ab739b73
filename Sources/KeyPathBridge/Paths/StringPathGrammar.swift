/// One component of a string path, as the grammar reads it. What a component means on an
/// object is the resolver's business (``ObservableProperties/resolve(_:on:in:)``): a `name` is
/// an observable property of an object (or, once observable collections exist, a dictionary key
/// or a collection's `count`).
package enum PathToken: Equatable, Sendable {
    /// A property name or a key, unescaped.
    case name(String)
    /// `*`: every observable property of the object (in the middle of a path, each followed by
    /// the rest of the path).
    case everyProperty
    /// `#3`: the element at an index of an array, whichever element is there.
    case indexFollowing(Int)
    /// `3`: the element that is at an index of an array when the observation starts, followed
    /// as it moves.
    case objectFollowing(Int)

    /// The component as a string path spells it (escaped where needed).
    package var spelling: String {
        switch self {
        case .everyProperty: "*"
        case .indexFollowing(let index): "#\(index)"
        case .objectFollowing(let index): "\(index)"
        case .name(let name): Self.escaped(name)
        }
    }

    /// `name` with a backslash before each `.` and `\`, and before a leading `#`, `*` or digit.
    /// (Unicode scalars, as the grammar reads them: a combining mark after a separator does not
    /// fuse with it.)
    private static func escaped(_ name: String) -> String {
        var text = String.UnicodeScalarView()
        for (offset, scalar) in name.unicodeScalars.enumerated() {
            let leading = offset == 0 && (scalar == "#" || scalar == "*" || scalar.isDigit)
            if scalar == "." || scalar == "\\" || leading { text.append("\\") }
            text.append(scalar)
        }
        return String(text)
    }
}

/// The grammar of string paths, in one place: components separated by `.`; a component is `*`,
/// `#` and a decimal index, a decimal index, or a name. A backslash makes the character after it
/// part of a name, so a key can contain `.` or `\`, or start with `#`, `*` or a digit
/// (`readme\.md`, `\#swift`, `\3d`).
package enum StringPathGrammar {
    /// The components of `text`.
    ///
    /// - Throws: ``PathError/malformed(path:reason:)`` saying what is wrong and where.
    package static func parse(_ text: String) throws(PathError) -> [PathToken] {
        guard !text.isEmpty else { throw .malformed(path: text, reason: "it is empty") }
        // Unicode scalars, not characters: a combining mark right after `.` or `\` must not
        // fuse with it into one character and hide the separator or the escape.
        var tokens: [PathToken] = []
        var current = String.UnicodeScalarView()
        var escapedAny = false
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\\":
                guard let next = scalars.next() else {
                    throw .malformed(path: text, reason: "it ends with a lone backslash")
                }
                current.append(next)
                escapedAny = true
            case ".":
                tokens.append(
                    try token(
                        String(current), escaped: escapedAny, number: tokens.count + 1, in: text))
                current = String.UnicodeScalarView()
                escapedAny = false
            default:
                current.append(scalar)
            }
        }
        tokens.append(
            try token(String(current), escaped: escapedAny, number: tokens.count + 1, in: text))
        return tokens
    }

    /// The token for one component's text (`number` counts from 1, for errors). An escaped
    /// component is always a name.
    private static func token(
        _ component: String, escaped: Bool, number: Int, in text: String
    ) throws(PathError) -> PathToken {
        guard !component.isEmpty else {
            throw .malformed(path: text, reason: "component \(number) is empty")
        }
        if escaped { return .name(component) }
        if component == "*" { return .everyProperty }
        let scalars = component.unicodeScalars
        if scalars.first == "#" {
            let digits = scalars.dropFirst()
            guard !digits.isEmpty, digits.allSatisfy(\.isDigit) else {
                throw .malformed(
                    path: text,
                    reason: "in component \(number), \"#\" must be followed by an index (#3)")
            }
            return .indexFollowing(try index(String(digits), number: number, in: text))
        }
        guard let first = scalars.first, first.isDigit else { return .name(component) }
        guard scalars.allSatisfy(\.isDigit) else {
            throw .malformed(
                path: text,
                reason: "component \(number) (\"\(component)\") starts with a digit but is not "
                    + "an index; escape it (\\\(component)) to name a key")
        }
        // An index is written without leading zeros: `007` is a key (of a dictionary, a
        // member of a set), the text itself.
        if scalars.count > 1, scalars.first == "0" { return .name(component) }
        return .objectFollowing(try index(component, number: number, in: text))
    }

    private static func index(
        _ digits: String, number: Int, in text: String
    ) throws(PathError) -> Int {
        guard let index = Int(digits) else {
            throw .malformed(path: text, reason: "the index in component \(number) is too large")
        }
        return index
    }
}

extension Unicode.Scalar {
    /// An ASCII decimal digit (what a string path's indices are made of).
    fileprivate var isDigit: Bool { ("0"..."9").contains(self) }
}
