"""Custom-op registration, kept as a table (the stand-in registers nothing with torch)."""
from typing import Callable, Optional

LayerNameType = str
_REGISTERED: dict[str, tuple] = {}


def direct_register_custom_op(op_name: str, op_func: Callable, mutates_args: Optional[list] = None,
                              fake_impl: Optional[Callable] = None, dispatch_key: Optional[str] = None,
                              tags: tuple = ()) -> None:
    _REGISTERED[op_name] = (op_func, fake_impl, tuple(mutates_args or ()))
