// vitest global setup: build the packages first when their sources changed since the last build
// (the tests load the built packages: test/util/built-packages.ts).
import { buildPackagesIfStale } from "./built-packages.js";

export default function setup(): void {
  buildPackagesIfStale();
}
