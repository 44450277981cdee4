"""Packing helpers shared by attention ops."""


def pack_seq_triton(x, lengths, pad_value: float = float("-inf")):
    raise NotImplementedError("the stand-in tree does not pack sequences")


def unpack_seq_triton(packed, lengths):
    raise NotImplementedError("the stand-in tree does not unpack sequences")
