"""pmqa.cases.shard: the Python split is the C++ one (pmqa_shard_tool), covers a suite exactly once
for every N, and reads K/N strictly."""
import os
import random
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pmqa.cases.shard import assign_shards, in_shard, parse_shard, shard_work  # noqa: E402

TOOL = os.environ.get("PMQA_SHARD_TOOL")


def random_suite(seed, n):
    rng = random.Random(seed)
    names = [f"case-{rng.randrange(100000)}" for _ in range(n)] + ["décodé-é", "Zeta", "alpha"]
    return [(name, 1 + (4096 if rng.random() < 0.25 else (1 << rng.randrange(30)) + rng.randrange(1000)))
            for name in names]


class Shards(unittest.TestCase):
    def test_every_case_once_for_every_count(self):
        for seed in range(1, 21):
            items = random_suite(seed, 1 + seed * 7 % 60)
            for n in range(1, 9):
                taken = [sum(in_shard(items, (k, n))[i] for k in range(1, n + 1)) for i in range(len(items))]
                self.assertEqual(taken, [1] * len(items), f"seed {seed}, N {n}")

    def test_order_does_not_matter(self):
        items = [(f"c{i}", w) for i, w in enumerate(random.Random(4).sample(range(1, 10 ** 6), 30))]
        first = dict(zip(items, assign_shards(items, 4)))
        shuffled = items[:]
        random.Random(9).shuffle(shuffled)
        self.assertEqual(dict(zip(shuffled, assign_shards(shuffled, 4))), first)

    def test_k_of_n(self):
        self.assertEqual(parse_shard("2/8"), (2, 8))
        for bad in ("", "3", "0/4", "5/4", "1/0", "a/b", "1/2/3", "-1/4", "1 /4", "1/5000"):
            with self.assertRaises(ValueError, msg=bad):
                parse_shard(bad)
        self.assertEqual(shard_work(64, 2, 64, 128, 16384), 64 * 2 * 64 * 128 * 16384 + 1)

    @unittest.skipIf(not TOOL, "PMQA_SHARD_TOOL (pmqa_shard_tool) is not set")
    def test_the_python_split_is_the_cpp_split(self):
        for seed in range(1, 31):
            items = random_suite(seed, 5 + seed * 13 % 80)
            text = "".join(f"{name} {work}\n" for name, work in items)
            for n in (1, 2, 3, 5, 8):
                cpp = subprocess.run([TOOL, str(n)], input=text.encode(), capture_output=True, check=True)
                self.assertEqual([int(x) for x in cpp.stdout.split()], assign_shards(items, n), f"seed {seed}, N {n}")


if __name__ == "__main__":
    unittest.main()
