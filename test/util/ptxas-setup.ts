// vitest setup: after each test file, assemble the PTX modules its tests queued (ptxas-deferred.ts).
import { afterAll } from "vitest";
import { assembleQueued } from "./ptxas-deferred.js";

afterAll(async () => {
  await assembleQueued();
}, 120_000);
