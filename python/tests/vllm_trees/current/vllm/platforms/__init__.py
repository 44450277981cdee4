"""The current platform, found once on first use: ROCm when amdsmi sees a GPU."""
from .interface import Platform, PlatformEnum

_current = None


def _rocm_present() -> bool:
    try:
        import amdsmi

        amdsmi.amdsmi_init()
        try:
            return len(amdsmi.amdsmi_get_processor_handles()) > 0
        finally:
            amdsmi.amdsmi_shut_down()
    except Exception:
        return False


def __getattr__(name: str):
    global _current
    if name == "current_platform":
        if _current is None:
            if _rocm_present():
                from .rocm import RocmPlatform

                _current = RocmPlatform()
            else:
                from .interface import UnspecifiedPlatform

                _current = UnspecifiedPlatform()
        return _current
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Platform", "PlatformEnum", "current_platform"]
