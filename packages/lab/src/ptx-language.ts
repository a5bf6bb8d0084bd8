// PTX highlighting for CodeMirror: a StreamLanguage (PTX ISA, "Syntax": directives start with
// ".", registers with "%", predicates "@p", comments "//" and "/* */", labels end with ":").
import { StreamLanguage, type StringStream } from "@codemirror/language";

interface PtxState {
  comment: boolean;
}

/** The PTX stream language: directives, instructions, registers, numbers, comments, labels. */
export const ptxLanguage = StreamLanguage.define<PtxState>({
  name: "ptx",
  startState: () => ({ comment: false }),
  token(stream: StringStream, state: PtxState): string | null {
    if (state.comment) {
      if (stream.skipTo("*/")) {
        stream.match("*/");
        state.comment = false;
      } else stream.skipToEnd();
      return "comment";
    }
    if (stream.eatSpace()) return null;
    if (stream.match("//")) {
      stream.skipToEnd();
      return "comment";
    }
    if (stream.match("/*")) {
      state.comment = true;
      return "comment";
    }
    if (stream.match(/^\.[A-Za-z_][\w.]*/)) return "keyword";
    if (stream.match(/^%[\w.]+/)) return "variableName";
    if (stream.match(/^@!?%?\w+/)) return "meta";
    if (stream.match(/^[A-Za-z_$][\w$]*:/)) return "labelName";
    if (stream.match(/^0[xX][0-9a-fA-F]+U?|^0[fFdD][0-9a-fA-F]+|^-?\d+(\.\d+)?([eE][-+]?\d+)?U?/))
      return "number";
    if (stream.match(/^"[^"]*"/)) return "string";
    if (stream.match(/^[a-z][\w]*(\.[\w:]+)*/)) return "typeName";
    stream.next();
    return null;
  },
});
