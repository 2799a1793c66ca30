import Foundation
import Testing
import UploadCommands

/// `send`'s file operands set aside before ArgumentParser sees a long argument list: every
/// option keeps its value, the first operand stays where it was, the rest keep their order.
@Suite struct ManyOperandsTests {
    let valueOptions: Set<String> = ["--to", "-H", "--header", "--field", "--files-from"]

    @Test func optionsKeepTheirValuesAndOperandsTheirOrder() throws {
        let arguments = ["a.jpg", "--to", "http://h/p", "b.jpg", "-H", "X-A: 1", "--json", "c.jpg", "--field=file", "--header", "-odd", "d.jpg"]
        let (parsed, operands) = try #require(ManyOperands.split(arguments, valueOptions: valueOptions))
        #expect(parsed == ["a.jpg", "--to", "http://h/p", "-H", "X-A: 1", "--json", "--field=file", "--header", "-odd"])
        #expect(operands == ["b.jpg", "c.jpg", "d.jpg"])
    }

    @Test func standardInputAndTheEndOfOptionsAreOperands() throws {
        let (parsed, operands) = try #require(ManyOperands.split(["--to", "u", "-", "--", "--json", "-H", "e.jpg"], valueOptions: valueOptions))
        #expect(parsed == ["--to", "u", "-"])
        #expect(operands == ["--json", "-H", "e.jpg"])
        let (first, rest) = try #require(ManyOperands.split(["--to", "u", "--", "-x.jpg", "f.jpg"], valueOptions: valueOptions))
        #expect(first == ["--to", "u", "--", "-x.jpg"])
        #expect(rest == ["f.jpg"])
    }

    @Test func whatCannotBeToldApartIsLeftToTheUsualParse() {
        #expect(ManyOperands.split(["a.jpg", "-HX-A: 1"], valueOptions: valueOptions) == nil, "a short option's attached value")
        #expect(ManyOperands.split(["a.jpg", "--to"], valueOptions: valueOptions) == nil, "a value option at the end")
    }

    @Test func valueOptionsComeFromArgumentParsersOwnDescription() {
        let dump = """
            {"command": {"arguments": [
              {"kind": "positional", "valueName": "file"},
              {"kind": "option", "names": [{"kind": "long", "name": "to"}]},
              {"kind": "option", "names": [{"kind": "short", "name": "H"}, {"kind": "long", "name": "header"}]},
              {"kind": "flag", "names": [{"kind": "long", "name": "json"}]}
            ]}}
            """
        #expect(ManyOperands.valueOptions(fromHelpDump: dump) == ["--to", "-H", "--header"])
        #expect(ManyOperands.valueOptions(fromHelpDump: "not json").isEmpty)
    }
}
