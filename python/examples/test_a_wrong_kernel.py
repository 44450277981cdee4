"""What a failing kernel looks like: test_my_kernel's stand-in with one planted bug, expected to FAIL.

The bug is spec §6 class 3: the cache always decoded as e4m3fn, so on the e4m3fnuz cases (MI300's
format) every key comes out twice its value. pmqa fails exactly those cases; each failure leaves the
case with the kernel's logits and the error map in --pmqa-artifacts (default: pytest's tmp_path)
and ends with the command that reproduces the verdict:

    python -m pytest test_a_wrong_kernel.py --pmqa-artifacts failed/
    ...
    reproduce: pmqa verify failed/test_a_wrong_kernel_shuffle-bs16-e4m3fnuz_/shuffle-bs16-e4m3fnuz.safetensors
    test: test_a_wrong_kernel.py::test_a_wrong_kernel[shuffle-bs16-e4m3fnuz]; again: python -m pytest 'test_a_wrong_kernel.py::test_a_wrong_kernel[shuffle-bs16-e4m3fnuz]'
"""
import pmqa
from test_my_kernel import my_kernel  # pytest puts this folder on sys.path


def test_a_wrong_kernel(pmqa_case):
    case = pmqa_case
    logits = my_kernel(case.q, case.kv_cache_blocks, case.weights, case.context_lens, case.block_table,
                       case.max_model_len, fp8="e4m3fn", layout=case.layout)  # the bug: the format ignored
    pmqa.assert_matches(case, logits)
