import { compareInt, foldInt } from "@tirx-ts/core";

export { compareInt, foldInt };
