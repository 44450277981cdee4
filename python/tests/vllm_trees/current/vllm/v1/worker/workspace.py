"""Shared scratch buffers, owned by the worker and handed to ops by shape and dtype."""
_manager = None


class WorkspaceManager:
    def __init__(self, device):
        self.device = device

    def get_simultaneous(self, *specs):
        import torch

        return tuple(torch.empty(shape, dtype=dtype, device=self.device) for shape, dtype in specs)


def init_workspace_manager(device) -> None:
    global _manager
    _manager = WorkspaceManager(device)


def current_workspace_manager() -> WorkspaceManager:
    if _manager is None:
        raise RuntimeError("the workspace manager is used before the worker set it up")
    return _manager
