#pragma once
// Builds real archives (tar.xz, tgz, tar, zip) with libarchive for the tests, including
// entries no honest archive holds (absolute paths, "..", devices, escaping links).
#include <catch2/catch.hpp>

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <string>
#include <vector>

namespace cvm::install::test {

class ArchiveBuilder {
public:
    enum class Format { TarXz, TarGz, Tar, Zip };

    ArchiveBuilder& file(const std::string& path, const std::string& content, int perm = 0644) {
        entries_.push_back({path, AE_IFREG, perm, content, "", ""});
        return *this;
    }
    ArchiveBuilder& dir(const std::string& path, int perm = 0755) {
        entries_.push_back({path, AE_IFDIR, perm, "", "", ""});
        return *this;
    }
    ArchiveBuilder& symlink(const std::string& path, const std::string& target) {
        entries_.push_back({path, AE_IFLNK, 0777, "", target, ""});
        return *this;
    }
    ArchiveBuilder& hardlink(const std::string& path, const std::string& target) {
        entries_.push_back({path, AE_IFREG, 0644, "", "", target});
        return *this;
    }
    ArchiveBuilder& special(const std::string& path, unsigned type) {
        entries_.push_back({path, type, 0644, "", "", ""});
        return *this;
    }

    void write(const std::filesystem::path& out, Format format) const {
        archive* a = archive_write_new();
        switch (format) {
        case Format::TarXz:
            archive_write_set_format_pax_restricted(a);
            archive_write_add_filter_xz(a);
            break;
        case Format::TarGz:
            archive_write_set_format_gnutar(a);
            archive_write_add_filter_gzip(a);
            break;
        case Format::Tar:
            archive_write_set_format_pax_restricted(a);
            break;
        case Format::Zip:
            archive_write_set_format_zip(a);
            break;
        }
        REQUIRE(archive_write_open_filename(a, out.string().c_str()) == ARCHIVE_OK);
        for (const auto& e : entries_) {
            archive_entry* entry = archive_entry_new();
            archive_entry_set_pathname(entry, e.path.c_str());
            archive_entry_set_mtime(entry, 1700000000, 0);
            if (!e.hardlink.empty()) {
                archive_entry_set_filetype(entry, AE_IFREG);
                archive_entry_set_hardlink(entry, e.hardlink.c_str());
                archive_entry_set_perm(entry, static_cast<mode_t>(e.perm));
                archive_entry_set_size(entry, 0);
            } else {
                archive_entry_set_filetype(entry, e.type);
                archive_entry_set_perm(entry, static_cast<mode_t>(e.perm));
                if (e.type == AE_IFLNK) archive_entry_set_symlink(entry, e.target.c_str());
                if (e.type == AE_IFCHR || e.type == AE_IFBLK) archive_entry_set_rdev(entry, 0x0103);
                archive_entry_set_size(
                    entry, e.type == AE_IFREG ? static_cast<la_int64_t>(e.content.size()) : 0);
            }
            int rc = archive_write_header(a, entry);
            INFO(archive_error_string(a));
            REQUIRE(rc >= ARCHIVE_WARN);
            if (e.type == AE_IFREG && e.hardlink.empty() && !e.content.empty())
                REQUIRE(archive_write_data(a, e.content.data(), e.content.size()) ==
                        static_cast<la_ssize_t>(e.content.size()));
            archive_entry_free(entry);
        }
        REQUIRE(archive_write_close(a) == ARCHIVE_OK);
        archive_write_free(a);
    }

private:
    struct Entry {
        std::string path;
        unsigned type;
        int perm;
        std::string content;
        std::string target;
        std::string hardlink;
    };
    std::vector<Entry> entries_;
};

// A few kilobytes of varied bytes, so compression does not make a file vanish.
inline std::string pseudo_random_bytes(std::size_t size, unsigned seed) {
    std::string s(size, '\0');
    unsigned x = seed * 2654435761u + 1;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x & 0xff);
    }
    return s;
}

} // namespace cvm::install::test

namespace cvm::install::test {

// The first bytes of an ELF shared object for `machine` (62 x86-64, 183 aarch64), padded.
inline std::string elf_bytes(unsigned machine) {
    std::string s(256, '\0');
    s[0] = 0x7f;
    s[1] = 'E';
    s[2] = 'L';
    s[3] = 'F';
    s[4] = 2; // 64-bit
    s[5] = 1; // little endian
    s[6] = 1;
    s[16] = 3; // ET_DYN
    s[18] = static_cast<char>(machine & 0xff);
    s[19] = static_cast<char>(machine >> 8);
    return s;
}

// The first bytes of a PE DLL for `machine` (0x8664 x64).
inline std::string pe_bytes(unsigned machine) {
    std::string s(512, '\0');
    s[0] = 'M';
    s[1] = 'Z';
    s[0x3c] = 0x40;
    s[0x40] = 'P';
    s[0x41] = 'E';
    s[0x44] = static_cast<char>(machine & 0xff);
    s[0x45] = static_cast<char>(machine >> 8);
    return s;
}

inline std::string cudnn_version_header(int major, int minor, int patch) {
    return "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n#define CUDNN_MAJOR " +
           std::to_string(major) + "\n#define CUDNN_MINOR " + std::to_string(minor) +
           "\n#define CUDNN_PATCHLEVEL " + std::to_string(patch) +
           "\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + "
           "CUDNN_PATCHLEVEL)\n#endif\n";
}

// Adds a cuDNN tree below `prefix` (e.g. "cuda/" or "cudnn-...-archive/"): headers and every
// library of the major version, Linux (.so with symlinks) or Windows (.dll, .lib).
inline ArchiveBuilder& add_cudnn_tree(ArchiveBuilder& b, const std::string& prefix, int major,
                                      int minor, int patch, bool windows,
                                      const std::string& lib_folder,
                                      const std::string& skip_library = "") {
    b.file(prefix + "include/cudnn_version.h", cudnn_version_header(major, minor, patch));
    b.file(prefix + "include/cudnn.h", "#include \"cudnn_version.h\"\n");
    std::vector<std::string> subs;
    if (major == 8)
        subs = {"",           "_ops_infer", "_ops_train", "_cnn_infer",
                "_cnn_train", "_adv_infer", "_adv_train"};
    else
        subs = {"",
                "_ops",
                "_cnn",
                "_adv",
                "_graph",
                "_heuristic",
                "_engines_precompiled",
                "_engines_runtime_compiled"};
    std::string m = std::to_string(major);
    std::string full = m + "." + std::to_string(minor) + "." + std::to_string(patch);
    for (const auto& sub : subs) {
        if (windows) {
            std::string dll = "cudnn" + sub + "64_" + m + ".dll";
            if (dll != skip_library) b.file(prefix + "bin/" + dll, pe_bytes(0x8664), 0755);
            b.file(prefix + lib_folder + "cudnn" + sub + ".lib", "import library");
        } else {
            std::string so = "libcudnn" + sub + ".so";
            if (so + "." + m == skip_library) continue;
            b.file(prefix + lib_folder + so + "." + full, elf_bytes(62), 0755);
            b.symlink(prefix + lib_folder + so + "." + m, so + "." + full);
            b.symlink(prefix + lib_folder + so, so + "." + m);
        }
    }
    b.file(prefix + "LICENSE", "NVIDIA license\n");
    return b;
}

} // namespace cvm::install::test
