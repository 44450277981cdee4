"""pmqa-probe: runs an inference engine's own FP8 paged-MQA-logits dispatch for every arch of pmqa's
expected matrix, on a machine without any GPU, and compares what the engine ran with the matrix.

    python3 -m pmqa.probe --engine vllm --source DIR     # a vLLM source tree
    python3 -m pmqa.probe --engine vllm --installed      # the vLLM this Python imports

See cli.py for the exit statuses, adapters/ for what the probe knows about each engine, and the
README section "Guarding your engine's dispatch".
"""

from pmqa import __version__  # noqa: E402,F401  (the one version: CMakeLists.txt's, through pmqa._core)
