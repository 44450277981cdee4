"""Loggers with *_once variants."""
import logging


class _Logger(logging.LoggerAdapter):
    def __init__(self, name: str):
        super().__init__(logging.getLogger(name), {})
        self._seen: set = set()

    def _once(self, level: int, msg, *args):
        if (level, msg) not in self._seen:
            self._seen.add((level, msg))
            self.log(level, msg, *args)

    def debug_once(self, msg, *args, **kwargs):
        self._once(logging.DEBUG, msg, *args)

    def info_once(self, msg, *args, **kwargs):
        self._once(logging.INFO, msg, *args)

    def warning_once(self, msg, *args, **kwargs):
        self._once(logging.WARNING, msg, *args)


def init_logger(name: str) -> _Logger:
    return _Logger(name)
