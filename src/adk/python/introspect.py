"""Sciencegate's Python local-tool bridge (standard library only).

Protocol: one JSON request on stdin, one JSON answer on stdout.
  {"op": "list", "file": "/abs/tools/fitting.py"}
    -> {"ok": true, "tools": [{"name", "description", "inputSchema"}]}
  {"op": "call", "file": "...", "name": "power_law_fit", "args": {...}}
    -> {"ok": true, "result": <json>} | {"ok": false, "error": "ValueError: ..."}
Every public top-level function defined in the file is a tool; a leading underscore keeps it private.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import sys
import types
import typing

_PRIMITIVES = {int: "integer", float: "number", str: "string", bool: "boolean"}


def _literal_schema(values: tuple) -> dict:
    kinds = {type(v) for v in values}
    schema: dict = {"enum": list(values)}
    if len(kinds) == 1:
        kind = next(iter(kinds))
        if kind in _PRIMITIVES:
            schema["type"] = _PRIMITIVES[kind]
    return schema


def _schema(hint: typing.Any) -> dict:
    if hint is inspect.Parameter.empty or hint is typing.Any:
        return {}
    if hint is None or hint is type(None):
        return {"type": "null"}
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    if hint is list or hint is tuple:
        return {"type": "array"}
    if hint is dict:
        return {"type": "object"}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Literal:
        return _literal_schema(args)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        members = [a for a in args if a is not type(None)]
        if all(typing.get_origin(a) is typing.Literal for a in members):
            values: tuple = ()
            for a in members:
                values += typing.get_args(a)
            return _literal_schema(values)
        if len(members) == 1:
            return _schema(members[0])
        return {"anyOf": [_schema(a) for a in members]}
    if origin in (list, tuple, set, frozenset) or origin is typing.Sequence:
        schema: dict = {"type": "array"}
        if args and args[-1] is not Ellipsis:
            schema["items"] = _schema(args[0])
        return schema
    if origin is dict or origin is typing.Mapping:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _schema(args[1])
        return schema
    if isinstance(hint, type) and typing.is_typeddict(hint):
        hints = typing.get_type_hints(hint)
        required = sorted(getattr(hint, "__required_keys__", hints.keys()))
        return {
            "type": "object",
            "properties": {k: _schema(v) for k, v in hints.items()},
            "required": required,
        }
    return {}


def _load(path: str) -> types.ModuleType:
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "sciencegate_tool_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _public_functions(module: types.ModuleType) -> list:
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or not inspect.isfunction(value):
            continue
        if value.__module__ != module.__name__:
            continue  # imported helpers belong to another module
        found.append((name, value))
    return found


def _describe(name: str, fn: typing.Callable) -> dict:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an unresolvable annotation leaves that parameter untyped
        hints = {}
    properties: dict = {}
    required: list = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = _schema(hints.get(param.name, inspect.Parameter.empty))
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        else:
            try:
                json.dumps(param.default)
                if param.default is not None:
                    schema["default"] = param.default
            except (TypeError, ValueError):
                pass
        properties[param.name] = schema
    input_schema: dict = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return {"name": name, "description": inspect.getdoc(fn) or "", "inputSchema": input_schema}


def main() -> int:
    request = json.load(sys.stdin)
    out = sys.stdout
    sys.stdout = sys.stderr  # a tool's print() must not corrupt the JSON answer
    try:
        module = _load(request["file"])
        if request["op"] == "list":
            answer = {"ok": True, "tools": [_describe(n, f) for n, f in _public_functions(module)]}
        else:
            functions = dict(_public_functions(module))
            fn = functions.get(request["name"])
            if fn is None:
                raise LookupError(f"no public function {request['name']!r} in {request['file']}")
            answer = {"ok": True, "result": fn(**request.get("args", {}))}
        text = json.dumps(answer, allow_nan=False)
    except Exception as error:  # the tool's own error, reported loudly to the caller
        text = json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"})
    out.write(text)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
