"""ELF DT_NEEDED reader."""

import io

import pytest
from derive_fakes import make_elf

from vllm_upgrade_check.parsing.elf import HeadCachedFile, read_elf_needed

LIBS = ["libtorch.so", "libcudart.so.12", "libc.so.6"]


@pytest.mark.parametrize("is64", [True, False])
@pytest.mark.parametrize("little", [True, False])
def test_reads_needed_in_order(is64, little):
    data = make_elf(LIBS, is64=is64, little=little)
    assert read_elf_needed(io.BytesIO(data)) == tuple(LIBS)


def test_strtab_is_mapped_through_load_segment():
    # a different load address must not change the result (DT_STRTAB is a
    # virtual address, not a file offset)
    data = make_elf(["libcublas.so.13"], vaddr_base=0x7F0000)
    assert read_elf_needed(io.BytesIO(data)) == ("libcublas.so.13",)


def test_no_needed_entries():
    assert read_elf_needed(io.BytesIO(make_elf([]))) == ()


@pytest.mark.parametrize("data", [b"", b"MZ\x90\x00" + b"\0" * 100, b"\x7fELF\x09\x01" + b"\0" * 100])
def test_rejects_non_elf(data):
    with pytest.raises(ValueError):
        read_elf_needed(io.BytesIO(data))


def test_rejects_truncated_file():
    data = make_elf(LIBS)
    with pytest.raises(ValueError):
        read_elf_needed(io.BytesIO(data[:-20]))


@pytest.mark.parametrize("head_size", [0, 40, 1 << 20])
def test_head_cached_file_reads_the_same(head_size):
    # a zip member is read through HeadCachedFile; any head size gives the same entries
    data = make_elf(LIBS, vaddr_base=0x7F0000)
    assert read_elf_needed(HeadCachedFile(io.BytesIO(data), head_size)) == tuple(LIBS)
