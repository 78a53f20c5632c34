import { describe, expect, test } from "vitest";
import { resolveConfigPath } from "../../src/config/config-path.js";

const cwd = "/srv/app";

describe("resolveConfigPath", () => {
  test.each([
    {
      name: "--config wins over both variables",
      configPath: "/etc/flag.json",
      env: { SCIENCEGATE_CONFIG: "/etc/sg.json", SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH: "/etc/seed.json" },
      expected: { path: "/etc/flag.json", explicit: true, source: "configPath" },
    },
    {
      name: "SCIENCEGATE_CONFIG wins over SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH",
      configPath: undefined,
      env: { SCIENCEGATE_CONFIG: "/etc/sg.json", SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH: "/etc/seed.json" },
      expected: { path: "/etc/sg.json", explicit: true, source: "SCIENCEGATE_CONFIG" },
    },
    {
      name: "SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH is used alone",
      configPath: undefined,
      env: { SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH: "/etc/seed.json" },
      expected: { path: "/etc/seed.json", explicit: true, source: "SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH" },
    },
    {
      name: "the default file in cwd is implicit",
      configPath: undefined,
      env: {},
      expected: { path: "/srv/app/extensions_config.json", explicit: false, source: "default" },
    },
    {
      name: "empty values count as absent",
      configPath: "",
      env: { SCIENCEGATE_CONFIG: "", SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH: "/etc/seed.json" },
      expected: { path: "/etc/seed.json", explicit: true, source: "SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH" },
    },
    {
      name: "a relative --config resolves against cwd",
      configPath: "conf/servers.json",
      env: {},
      expected: { path: "/srv/app/conf/servers.json", explicit: true, source: "configPath" },
    },
    {
      name: "a relative variable resolves against cwd",
      configPath: undefined,
      env: { SCIENCEGATE_CONFIG: "../shared.json" },
      expected: { path: "/srv/shared.json", explicit: true, source: "SCIENCEGATE_CONFIG" },
    },
  ])("$name", ({ configPath, env, expected }) => {
    expect(resolveConfigPath({ configPath, env, cwd })).toEqual(expected);
  });
});
