import Foundation
import HeraldTestSupport
import Messaging
import Testing

@Suite("Variable is Codable as its plain value")
struct VariableCodableTests {
    struct Model: Codable {
        var title = Var("Draft")
        var count = Var<Int?>(3)
    }

    struct PlainModel: Codable {
        var title = "Draft"
        var count: Int? = 3
    }

    @Test func aModelWithVariablesEncodesLikeOneWithPlainProperties() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let withVariables = try encoder.encode(Model())
        let plain = try encoder.encode(PlainModel())
        #expect(withVariables == plain)
        #expect(String(decoding: withVariables, as: UTF8.self) == #"{"count":3,"title":"Draft"}"#)
    }

    @Test func aVariableDecodesFromItsPlainValue() throws {
        let json = Data(#"{"title":"Final","count":null}"#.utf8)
        let model = try JSONDecoder().decode(Model.self, from: json)
        #expect(model.title.value == "Final")
        #expect(model.count.value == nil)
    }

    @Test func aVariableDecodesFromSwiftObserversKeyedForm() throws {
        let json = Data(#"{"title":{"storedValue":"Old"},"count":{"storedValue":7}}"#.utf8)
        let model = try JSONDecoder().decode(Model.self, from: json)
        #expect(model.title.value == "Old")
        #expect(model.count.value == 7)
    }

    @Test func aDecodedVariableKeepsItsChangeRule() throws {
        let number = try JSONDecoder().decode(Var<Int>.self, from: Data("5".utf8))
        let observer = RecordingObserver<Update<Int>>()
        observer.record(number)
        number.value = 5
        number.value = 6
        #expect(observer.messages.elements == [Update(5, 6)])
    }

    @Test func decodingAWrongTypeThrowsTheDecodingError() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Var<Int>.self, from: Data(#""five""#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Var<Int>.self, from: Data(#"{"other":5}"#.utf8))
        }
    }

    @Test func aNilOptionalVariableIsLeftOutLikeAPlainOptional() throws {
        struct Plain: Codable { var count: Int? = nil }
        struct WithVariable: Codable { var count = Var<Int?>(nil) }
        struct WithWrapper: Codable { @ObservableVar var count: Int? = nil }
        let plain = try JSONEncoder().encode(Plain())
        #expect(String(decoding: plain, as: UTF8.self) == "{}")
        #expect(try JSONEncoder().encode(WithVariable()) == plain)
        #expect(try JSONEncoder().encode(WithWrapper()) == plain)

        let decodedVariable = try JSONDecoder().decode(WithVariable.self, from: plain)
        let decodedWrapper = try JSONDecoder().decode(WithWrapper.self, from: plain)
        #expect(decodedVariable.count.value == nil)
        #expect(decodedWrapper.count == nil)
        let present = try JSONDecoder().decode(WithVariable.self, from: Data(#"{"count":4}"#.utf8))
        #expect(present.count.value == 4)
    }

    @Test func observableVarEncodesAsItsPlainValue() throws {
        struct Settings: Codable {
            @ObservableVar var volume = 11
        }
        let data = try JSONEncoder().encode(Settings())
        #expect(String(decoding: data, as: UTF8.self) == #"{"volume":11}"#)
        let decoded = try JSONDecoder().decode(Settings.self, from: Data(#"{"volume":3}"#.utf8))
        #expect(decoded.volume == 3)
    }
}
