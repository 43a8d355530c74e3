// Files on Windows (platform.h): reading with the security descriptor judged once on the open
// handle, identities, links (symlink, junction, hard-link tree), locks.
#include "platform/files_detail.h"
#include "platform/platform.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <system_error>

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include "platform/windows/security.h"

namespace cvm::platform {

// The security descriptor's verdict kept with the file's meta, for the trust rules and their
// questions (trust.cpp); uid and mode stay 0 (platform.h).
static void apply_security(win::SecurityVerdict v, FileMeta& m) {
    m.security = std::make_shared<const win::SecurityVerdict>(std::move(v));
}

bool is_executable(const fs::path& p) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return false;
    std::string ext = p.extension().u8string();
    for (auto& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string pathext = get_env("PATHEXT").value_or(".COM;.EXE;.BAT;.CMD");
    for (auto& c : pathext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t start = 0;
    while (start <= pathext.size()) {
        size_t end = pathext.find(';', start);
        if (end == std::string::npos) end = pathext.size();
        if (!ext.empty() && pathext.compare(start, end - start, ext) == 0) return true;
        start = end + 1;
    }
    return false;
}

static std::optional<FileId> handle_id(const fs::path& p) {
    // FILE_FLAG_BACKUP_SEMANTICS lets folders open too; no access right is needed for the index.
    HANDLE h =
        CreateFileW(p.wstring().c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) return std::nullopt;
    BY_HANDLE_FILE_INFORMATION info;
    BOOL ok = GetFileInformationByHandle(h, &info);
    CloseHandle(h);
    if (!ok) return std::nullopt;
    FileId id;
    id.device = info.dwVolumeSerialNumber;
    id.inode = (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
    return id;
}

std::optional<FileId> file_id(const fs::path& p) {
    return handle_id(p);
}

bool exists(const std::string& utf8_path) {
    return GetFileAttributesW(widen(utf8_path).c_str()) != INVALID_FILE_ATTRIBUTES;
}

std::vector<std::string> folder_names(const std::string& utf8_dir, FileMeta* meta) {
    std::vector<std::string> out;
    std::error_code ec;
    if (meta) {
        *meta = FileMeta{};
        if (fs::is_directory(fs::u8path(utf8_dir), ec)) {
            meta->type = FileMeta::Type::Directory;
            apply_security(win::security_of(widen(utf8_dir)), *meta);
        }
    }
    for (fs::directory_iterator it(fs::u8path(utf8_dir), ec), end; !ec && it != end;
         it.increment(ec))
        out.push_back(it->path().filename().u8string());
    return out;
}

std::optional<FileId> executable_id(const fs::path& p, FileMeta*) {
    if (!is_executable(p)) return std::nullopt;
    return handle_id(p);
}

// A directory junction needs no administrator rights, unlike a directory symlink. Returns 0, or
// the Windows error code.
static DWORD make_junction(const fs::path& target, const fs::path& link) {
    std::wstring absolute = fs::absolute(target).wstring();
    // A junction stores an NT path: \??\C:\... (an extended \\?\ prefix is the same thing).
    if (absolute.rfind(L"\\\\?\\", 0) == 0) absolute.erase(0, 4);
    if (!CreateDirectoryW(link.wstring().c_str(), nullptr)) return GetLastError();
    HANDLE h = CreateFileW(link.wstring().c_str(), GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        RemoveDirectoryW(link.wstring().c_str());
        return err;
    }
    std::wstring substitute = L"\\??\\" + absolute;
    const std::wstring& print = absolute;
    size_t sub_bytes = substitute.size() * sizeof(wchar_t);
    size_t print_bytes = print.size() * sizeof(wchar_t);
    std::vector<char> buf(8 + 8 + sub_bytes + 2 + print_bytes + 2, 0);
    auto put16 = [&](size_t off, size_t v) {
        buf[off] = static_cast<char>(v & 0xff);
        buf[off + 1] = static_cast<char>((v >> 8) & 0xff);
    };
    DWORD tag = IO_REPARSE_TAG_MOUNT_POINT;
    std::memcpy(buf.data(), &tag, 4);
    put16(4, buf.size() - 8);
    put16(8, 0);
    put16(10, sub_bytes);
    put16(12, sub_bytes + 2);
    put16(14, print_bytes);
    std::memcpy(buf.data() + 16, substitute.data(), sub_bytes);
    std::memcpy(buf.data() + 16 + sub_bytes + 2, print.data(), print_bytes);
    DWORD returned = 0;
    BOOL ok = DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, buf.data(),
                              static_cast<DWORD>(buf.size()), nullptr, 0, &returned, nullptr);
    DWORD err = ok ? 0 : GetLastError();
    CloseHandle(h);
    if (!ok) RemoveDirectoryW(link.wstring().c_str());
    return err;
}

// Where a volume has no reparse points (FAT, some network shares, Wine up to 8.x: "Function not
// implemented"), a folder is shown by a real folder tree whose files are hard links: still no
// copy and no administrator rights. Returns an empty string, or what failed.
static std::string link_tree(const fs::path& target, const fs::path& link) {
    std::error_code ec;
    fs::create_directory(link, ec);
    if (ec) return "cannot create " + link.u8string() + ": " + ec.message();
    for (fs::directory_iterator it(target, ec), end; !ec && it != end; it.increment(ec)) {
        fs::path to = link / it->path().filename();
        std::error_code kind_ec;
        if (it->is_directory(kind_ec)) {
            std::string error = link_tree(it->path(), to);
            if (!error.empty()) return error;
            continue;
        }
        std::error_code link_ec;
        fs::create_hard_link(it->path(), to, link_ec);
        if (link_ec)
            return "cannot hard-link " + to.u8string() + " to " + it->path().u8string() + ": " +
                   link_ec.message();
    }
    if (ec) return "cannot list " + target.u8string() + ": " + ec.message();
    return {};
}

void make_link(const fs::path& target, const fs::path& link, bool is_directory) {
    std::error_code ec;
    if (is_directory) {
        fs::create_directory_symlink(target, link, ec);
        if (!ec) return;
        DWORD junction_error = make_junction(target, link);
        if (junction_error == 0) return;
        std::string tree_error = link_tree(target, link);
        if (tree_error.empty()) return;
        throw std::runtime_error(
            "cannot link " + link.u8string() + " to " + target.u8string() + ": no symlink (" +
            ec.message() + "), no junction (Windows error " + std::to_string(junction_error) +
            "), " + tree_error + "; put CVM_ROOT on the same NTFS volume as the toolkit");
    }
    fs::create_symlink(target, link, ec);
    if (!ec) return;
    std::error_code hard_ec;
    fs::create_hard_link(target, link, hard_ec);
    if (!hard_ec) return;
    throw std::runtime_error("cannot link " + link.u8string() + " to " + target.u8string() +
                             ": no symlink (" + ec.message() + "), no hard link (" +
                             hard_ec.message() +
                             "); put CVM_ROOT on the same NTFS volume as the toolkit");
}

bool FileLock::acquire(const fs::path& path, bool try_only) {
    HANDLE h = CreateFileW(path.wstring().c_str(), GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                           OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE)
        throw std::runtime_error("cannot open lock file " + path.u8string());
    OVERLAPPED ov{};
    DWORD flags = LOCKFILE_EXCLUSIVE_LOCK | (try_only ? LOCKFILE_FAIL_IMMEDIATELY : 0);
    if (!LockFileEx(h, flags, 0, 1, 0, &ov)) {
        CloseHandle(h);
        if (try_only) return false;
        throw std::runtime_error("cannot lock " + path.u8string());
    }
    release();
    handle_ = reinterpret_cast<std::intptr_t>(h);
    return true;
}

void FileLock::release() {
    if (handle_ == -1) return;
    HANDLE h = reinterpret_cast<HANDLE>(handle_);
    OVERLAPPED ov{};
    UnlockFileEx(h, 0, 1, 0, &ov);
    CloseHandle(h);
    handle_ = -1;
}

static FileRead read_file_windows(const fs::path& p, std::size_t limit) {
    FileRead r;
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
        r.error = ec.value() ? ec.value() : ENOENT;
        if (!fs::exists(st)) r.error = ENOENT;
        return r;
    }
    r.meta.type = fs::is_regular_file(st) ? FileMeta::Type::Regular
                  : fs::is_directory(st)  ? FileMeta::Type::Directory
                                          : FileMeta::Type::Other;
    if (r.meta.type != FileMeta::Type::Regular) {
        apply_security(win::security_of(p.wstring()), r.meta);
        return r;
    }
    // GENERIC_READ includes READ_CONTROL: the owner judged is the open file's.
    HANDLE h = CreateFileW(p.wstring().c_str(), GENERIC_READ,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError();
        r.error = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? ENOENT : EACCES;
        return r;
    }
    apply_security(win::security_of(h), r.meta);
    std::string out;
    char buf[8192];
    DWORD n = 0;
    while (out.size() < limit &&
           ReadFile(h, buf, static_cast<DWORD>(std::min(sizeof buf, limit - out.size())), &n,
                    nullptr) &&
           n > 0)
        out.append(buf, n);
    CloseHandle(h);
    r.text = std::move(out);
    return r;
}

FileRead read_file_checked(const std::string& utf8_path, std::size_t limit) {
    return read_file_windows(fs::u8path(utf8_path), limit);
}

std::optional<std::string> read_file(const std::string& utf8_path, std::size_t limit) {
    return read_file_checked(utf8_path, limit).text;
}

std::optional<std::string> read_file(const fs::path& p, std::size_t limit) {
    return read_file_windows(p, limit).text;
}

bool rewrite_in_place(const fs::path&, std::string_view) {
    return false; // the callers write atomically
}

ChangeStamp change_stamp(const fs::path&) {
    return {}; // no stamp vouched for (platform.h): the caller reads the file
}

std::optional<FileMeta> file_meta(const fs::path& p, int* error) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
        if (error) *error = ENOENT;
        return std::nullopt;
    }
    FileMeta m;
    m.type = fs::is_regular_file(st) ? FileMeta::Type::Regular
             : fs::is_directory(st)  ? FileMeta::Type::Directory
                                     : FileMeta::Type::Other;
    apply_security(win::security_of(p.wstring()), m);
    return m;
}

std::optional<FileMeta> link_meta(const fs::path& p, bool& link) {
    link = false;
    return file_meta(p);
}

std::uint32_t effective_uid() {
    return 0;
}

int create_file_for_writing(const fs::path& file) {
    (void)file;
    return 0;
}

// write_file_atomically's temporary file, opened for writing (files_detail.h).
std::FILE* open_new_file(const fs::path& tmp, int& error) {
    std::FILE* f = _wfopen(tmp.wstring().c_str(), L"wb");
    if (!f) error = errno ? errno : EIO;
    return f;
}

std::FILE* open_existing_file(const fs::path& file, int& error) {
    std::FILE* f = _wfopen(file.wstring().c_str(), L"wb");
    if (!f) error = errno ? errno : EIO;
    return f;
}

fs::path self_path_for_identity() {
    return current_exe();
}

} // namespace cvm::platform
