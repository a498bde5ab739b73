/// One component of a string path, as the grammar reads it. What a component means on an
/// object is the resolver's business (``ObservableProperties/resolve(_:on:in:)``): a `name` is
/// an observable property of an object (or, once observable collections exist, a dictionary key
/// or a collection's `count`).
package enum PathToken: Equatable, Sendable {
    /// A property name or a key, unescaped.
    case name(String)
    /// `*`: every observable property of the object.
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
    private static func escaped(_ name: String) -> String {
        var text = ""
        for (offset, character) in name.enumerated() {
            let leading = offset == 0 && (character == "#" || character == "*" || character.isDigit)
            if character == "." || character == "\\" || leading { text.append("\\") }
            text.append(character)
        }
        return text
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
        var tokens: [PathToken] = []
        var current = ""
        var escapedAny = false
        var characters = text.makeIterator()
        while let character = characters.next() {
            switch character {
            case "\\":
                guard let next = characters.next() else {
                    throw .malformed(path: text, reason: "it ends with a lone backslash")
                }
                current.append(next)
                escapedAny = true
            case ".":
                tokens.append(
                    try token(current, escaped: escapedAny, number: tokens.count + 1, in: text))
                current = ""
                escapedAny = false
            default:
                current.append(character)
            }
        }
        tokens.append(try token(current, escaped: escapedAny, number: tokens.count + 1, in: text))
        if let star = tokens.firstIndex(of: .everyProperty), star != tokens.count - 1 {
            throw .malformed(path: text, reason: "\"*\" can only be the last component")
        }
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
        if component.hasPrefix("#") {
            let digits = component.dropFirst()
            guard !digits.isEmpty, digits.allSatisfy(\.isDigit) else {
                throw .malformed(
                    path: text,
                    reason: "in component \(number), \"#\" must be followed by an index (#3)")
            }
            return .indexFollowing(try index(digits, number: number, in: text))
        }
        guard let first = component.first, first.isDigit else { return .name(component) }
        guard component.allSatisfy(\.isDigit) else {
            throw .malformed(
                path: text,
                reason: "component \(number) (\"\(component)\") starts with a digit but is not "
                    + "an index; escape it (\\\(component)) to name a key")
        }
        return .objectFollowing(try index(component[...], number: number, in: text))
    }

    private static func index(
        _ digits: Substring, number: Int, in text: String
    ) throws(PathError) -> Int {
        guard let index = Int(digits) else {
            throw .malformed(path: text, reason: "the index in component \(number) is too large")
        }
        return index
    }
}

extension Character {
    /// An ASCII decimal digit (what a string path's indices are made of).
    fileprivate var isDigit: Bool { isASCII && isNumber }
}
