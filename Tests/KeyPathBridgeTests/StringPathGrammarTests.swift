import HeraldTestSupport
import KeyPathBridge
import Testing

@Suite("String path grammar")
struct StringPathGrammarTests {
    @Test func componentsAreNamesIndicesElementsAndStars() throws {
        #expect(
            try StringPathGrammar.parse("currentUser.address.zipCode")
                == [.name("currentUser"), .name("address"), .name("zipCode")])
        #expect(
            try StringPathGrammar.parse("items.#3.name")
                == [.name("items"), .indexFollowing(3), .name("name")])
        #expect(try StringPathGrammar.parse("items.0") == [.name("items"), .objectFollowing(0)])
        // An index has no leading zeros: `007` is a key.
        #expect(try StringPathGrammar.parse("codes.007") == [.name("codes"), .name("007")])
        #expect(try StringPathGrammar.parse("items.count") == [.name("items"), .name("count")])
        #expect(try StringPathGrammar.parse("*") == [.everyProperty])
        #expect(try StringPathGrammar.parse("user.*") == [.name("user"), .everyProperty])
        #expect(
            try StringPathGrammar.parse("user.*.zipCode")
                == [.name("user"), .everyProperty, .name("zipCode")])
    }

    @Test func aBackslashMakesTheNextCharacterPartOfAKey() throws {
        #expect(
            try StringPathGrammar.parse(#"files.readme\.md"#) == [
                .name("files"), .name("readme.md"),
            ])
        #expect(
            try StringPathGrammar.parse(##"tags.\#swift"##) == [.name("tags"), .name("#swift")])
        #expect(try StringPathGrammar.parse(#"scores.\3d"#) == [.name("scores"), .name("3d")])
        #expect(try StringPathGrammar.parse(#"marks.\*"#) == [.name("marks"), .name("*")])
        #expect(try StringPathGrammar.parse(#"a\\b"#) == [.name(#"a\b"#)])
    }

    @Test func everyComponentSpellsBackAsItParses() throws {
        let texts = [#"files.readme\.md"#, ##"tags.\#swift.#2.3"##, #"scores.\3d.*"#, #"a\\b.\*"#]
        for text in texts {
            let tokens = try StringPathGrammar.parse(text)
            #expect(tokens.map(\.spelling).joined(separator: ".") == text)
        }
    }

    @Test func malformedTextIsAnErrorThatSaysWhy() {
        let cases: [(text: String, reason: String)] = [
            ("", "empty"),
            ("a..b", "component 2 is empty"),
            ("a.", "component 2 is empty"),
            (".a", "component 1 is empty"),
            ("a.#", "\"#\" must be followed by an index"),
            ("a.#x", "\"#\" must be followed by an index"),
            ("a.3d", "starts with a digit"),
            (#"a\"#, "ends with a lone backslash"),
            ("a.99999999999999999999", "too large"),
        ]
        for (text, reason) in cases {
            do {
                _ = try StringPathGrammar.parse(text)
                Issue.record("\"\(text)\" parsed")
            } catch {
                guard case .malformed(let path, _) = error else {
                    Issue.record("\"\(text)\": \(error)")
                    continue
                }
                #expect(path == text)
                #expect(error.description.contains(reason), "\(text): \(error)")
            }
        }
    }

    /// Until observable collections exist, an element or index component is a clear error
    /// naming the component and the type it was applied to.
    @Test func elementComponentsOnAnObjectThatIsNoCollectionAreErrors() {
        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        for component in ["#0", "3"] {
            let text = "address.\(component)"
            do {
                _ = try ObservedPath(ann, path: text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error == .notACollection(component, type: "Address", path: text))
                #expect(error.description.contains("Address is not an observable collection"))
            }
        }
    }

    /// A component after a property that holds a value (not an object) names what it holds.
    @Test func aComponentAfterAPlainValueIsAnError() {
        let ann = User(name: "Ann")
        do {
            _ = try ObservedPath(ann, path: "name.count")
            Issue.record("accepted")
        } catch {
            #expect(error == .notAnObject("name", type: "String", path: "name.count"))
            #expect(error.description.contains("holds a String, not an object"))
        }
    }

    @Test func anEscapedKeyNamesAPropertyOfThatName() throws {
        final class Odd {
            @ObservableVar var plain = 1
        }
        let odd = Odd()
        let path = try ObservedPath(odd, path: #"\plain"#)  // an escaped letter is itself
        #expect(path.value as? Int == 1)
        do {
            _ = try ObservedPath(odd, path: #"\3d"#)
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains(#"no observable property "3d""#))
        }
    }
}

extension StringPathGrammarTests {
    /// The grammar reads Unicode scalars, not characters: a combining mark right after `.` or
    /// `\` does not fuse with it and hide the separator or the escape; spelling round-trips.
    @Test func separatorsAreScalarsNotCharacters() throws {
        #expect(try StringPathGrammar.parse("a.\u{301}b") == [.name("a"), .name("\u{301}b")])
        let tokens: [PathToken] = [.name("a"), .name("\u{301}b")]
        let spelled = tokens.map(\.spelling).joined(separator: ".")
        #expect(try StringPathGrammar.parse(spelled) == tokens)
    }
}
