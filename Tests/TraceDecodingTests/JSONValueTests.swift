import Testing
import TraceDecoding

// JSONValue.rendered() must match Python's json.dumps(value, indent=1, sort_keys=True)
// byte for byte: expected-counts.json was written that way and is compared as text.

@Suite("JSON rendering")
struct JSONValueTests {
    @Test("A nested example matches Python's json.dumps(indent=1, sort_keys=True)")
    func matchesPython() {
        // Produced offline with python3:
        //   v = {"b": [1, {"z": "\"q\" \\ \n\r\t\b\f \u0001 \u007f é 😀", "a": []}, {}],
        //        "a": {"y": True, "x": None, "B": -3}, "é": "x"}
        //   print(json.dumps(v, indent=1, sort_keys=True))
        let expected = #"""
            {
             "a": {
              "B": -3,
              "x": null,
              "y": true
             },
             "b": [
              1,
              {
               "a": [],
               "z": "\"q\" \\ \n\r\t\b\f \u0001 \u007f \u00e9 \ud83d\ude00"
              },
              {}
             ],
             "\u00e9": "x"
            }
            """#
        let value = JSONValue.object([
            "b": .array([
                .number(1), .object(["z": .string("\"q\" \\ \n\r\t\u{8}\u{C} \u{1} \u{7F} é 😀"), "a": .array([])]),
                .object([:]),
            ]),
            "a": .object(["y": .bool(true), "x": .null, "B": .number(-3)]),
            "é": .string("x"),
        ])
        #expect(value.rendered() == expected)
    }

    @Test("Scalars and empty containers render alone")
    func scalars() {
        #expect(JSONValue.number(0).rendered() == "0")
        #expect(JSONValue.number(-12).rendered() == "-12")
        #expect(JSONValue.bool(false).rendered() == "false")
        #expect(JSONValue.null.rendered() == "null")
        #expect(JSONValue.string("").rendered() == #""""#)
        #expect(JSONValue.object([:]).rendered() == "{}")
        #expect(JSONValue.array([]).rendered() == "[]")
    }

    @Test("Keys sort by code point, as Python's sort_keys does")
    func keyOrder() {
        // Upper case before lower case, "0x0c" before "0x1", "é" (U+00E9) after "z".
        let value = JSONValue.object([
            "b": .number(1), "B": .number(2), "0x1": .number(3), "0x0c": .number(4),
            "é": .number(5), "z": .number(6),
        ])
        #expect(
            value.rendered() == """
                {
                 "0x0c": 4,
                 "0x1": 3,
                 "B": 2,
                 "b": 1,
                 "z": 6,
                 "\\u00e9": 5
                }
                """)
    }

    @Test("Indent width is a parameter")
    func indentWidth() {
        let value = JSONValue.object(["a": .array([.number(1)])])
        #expect(value.rendered(indent: 2) == "{\n  \"a\": [\n    1\n  ]\n}")
    }

    @Test func compactIsOneLineWithSortedKeys() {
        let value = JSONValue.object(["b": .array([.number(1), .null]), "a": .string("x\"y"), "c": .object([:])])
        #expect(value.compact == #"{"a": "x\"y", "b": [1, null], "c": {}}"#)
    }
}
