"""Strict JSON for pmqa's readers: an object that names a key twice is an error, not "the last one wins".

    json.loads(text, object_pairs_hook=duplicate_key_hook(MyError, lambda k: f'key "{k}" twice'))

Each reader raises its own error type with its own wording; the check is this one.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple, Type


def _appears_twice(key: str) -> str:
    return f"key \"{key}\" appears twice in one object"


def duplicate_key_hook(error: Type[Exception],
                       describe: Callable[[str], str] = _appears_twice) -> Callable[[List[Tuple[str, Any]]], Dict[str, Any]]:
    """An object_pairs_hook for json.loads that raises error(describe(key)) at a repeated key."""
    def hook(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise error(describe(k))
            out[k] = v
        return out
    return hook
