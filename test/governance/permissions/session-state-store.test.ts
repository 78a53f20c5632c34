import { MemorySessionStateStore } from "../../../src/governance/permissions/index.js";
import { describeSessionStateStoreConformance } from "../../../src/testing/conformance/index.js";

describeSessionStateStoreConformance("MemorySessionStateStore", () => new MemorySessionStateStore());
