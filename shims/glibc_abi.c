// The two symbols that GCC's libstdc++ and unwinder, built on a glibc system, take from the C
// library and musl does not have. Linked only into the shim's musl build (shims/CMakeLists.txt).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

// libstdc++ skips atomic reference counts when this says the process has one thread. 0 keeps
// them: always correct, a few instructions slower.
char __libc_single_threaded = 0;

#ifdef DLFO_STRUCT_HAS_EH_DBASE
// The layout is glibc's (dlfcn.h, 2.35 and later): the unwinder was built against it.
struct lookup {
    uintptr_t pc;
    struct dl_find_object* result;
    int found;
};

static int look_in(struct dl_phdr_info* info, size_t size, void* data) {
    (void)size;
    struct lookup* q = data;
    uintptr_t low = UINTPTR_MAX, high = 0;
    int holds_pc = 0;
    void* eh_frame_hdr = NULL;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD) {
            if (start < low) low = start;
            if (start + ph->p_memsz > high) high = start + ph->p_memsz;
            if (q->pc >= start && q->pc < start + ph->p_memsz) holds_pc = 1;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            eh_frame_hdr = (void*)start;
        }
    }
    if (!holds_pc) return 0;
    q->result->dlfo_flags = 0;
    q->result->dlfo_map_start = (void*)low;
    q->result->dlfo_map_end = (void*)high;
    q->result->dlfo_link_map = NULL;
    q->result->dlfo_eh_frame = eh_frame_hdr;
    q->found = 1;
    return 1;
}

// What the unwinder asks to find the exception tables of the code at `pc` (glibc 2.35's
// interface): here, through musl's dl_iterate_phdr, which knows the static program's headers.
int _dl_find_object(void* pc, struct dl_find_object* result) {
    struct lookup q = {(uintptr_t)pc, result, 0};
    dl_iterate_phdr(look_in, &q);
    return q.found ? 0 : -1;
}
#endif
