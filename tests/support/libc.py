"""The machine's x86_64 glibc as a real ELF file for symbolization tests."""
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"


def libc_symbol_offset(name):
    """The file offset of libc's dynamic symbol `name` (through its PT_LOAD)."""
    from elftools.elf.elffile import ELFFile
    with open(LIBC, "rb") as f:
        elf = ELFFile(f)
        value = elf.get_section_by_name(".dynsym").get_symbol_by_name(name)[0]["st_value"]
        for seg in elf.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_vaddr"] <= value < seg["p_vaddr"] + seg["p_filesz"]:
                return value - seg["p_vaddr"] + seg["p_offset"]
    raise LookupError(name)
