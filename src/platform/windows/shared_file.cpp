// SharedFile on Windows (see shared_file.h): handles from CreateFileW that share reading,
// writing and deletion, so that the part file a download writes can be read by the extraction
// at the same time, then renamed into the cache (MoveFileExW) or deleted while it reads.
#include "platform/shared_file.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>

#include <windows.h>

namespace cvm::platform {

namespace {

// The errno-style value the callers know (ENOSPC: "free space", EACCES: permission...).
int errno_of(DWORD error) {
    switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
        return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_WRITE_PROTECT:
        return EACCES;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
        return ENOSPC;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
        return EEXIST;
    case ERROR_FILENAME_EXCED_RANGE:
        return ENAMETOOLONG;
    default:
        return EIO;
    }
}

constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

} // namespace

SharedFile::SharedFile(SharedFile&& other) noexcept : handle_(other.handle_) {
    other.handle_ = nullptr;
}

SharedFile& SharedFile::operator=(SharedFile&& other) noexcept {
    if (this != &other) {
        close();
        handle_ = other.handle_;
        other.handle_ = nullptr;
    }
    return *this;
}

int SharedFile::open(const std::filesystem::path& path, Mode mode) {
    close();
    DWORD access = mode == Mode::Read ? GENERIC_READ : GENERIC_WRITE;
    DWORD disposition = mode == Mode::Read     ? OPEN_EXISTING
                        : mode == Mode::Append ? OPEN_ALWAYS
                                               : CREATE_ALWAYS;
    HANDLE h = CreateFileW(path.wstring().c_str(), access, kShareAll, nullptr, disposition,
                           FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) return errno_of(GetLastError());
    int err = 0;
    // Folders do not open without FILE_FLAG_BACKUP_SEMANTICS; pipes and devices do.
    if (GetFileType(h) != FILE_TYPE_DISK) err = EINVAL;
    LARGE_INTEGER zero{};
    if (err == 0 && mode == Mode::Append && !SetFilePointerEx(h, zero, nullptr, FILE_END))
        err = errno_of(GetLastError());
    if (err != 0) {
        CloseHandle(h);
        return err;
    }
    handle_ = h;
    return 0;
}

bool SharedFile::is_open() const {
    return handle_ != nullptr;
}

void SharedFile::close() {
    if (handle_ != nullptr) CloseHandle(static_cast<HANDLE>(handle_));
    handle_ = nullptr;
}

int SharedFile::write_all(const void* data, std::size_t size) {
    if (handle_ == nullptr) return EBADF;
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(size, DWORD(1) << 30));
        DWORD written = 0;
        if (!WriteFile(static_cast<HANDLE>(handle_), p, chunk, &written, nullptr))
            return errno_of(GetLastError());
        if (written == 0) return EIO;
        p += written;
        size -= written;
    }
    return 0;
}

std::size_t SharedFile::read(void* buffer, std::size_t size, int* error) {
    if (handle_ == nullptr) {
        if (error) *error = EBADF;
        return 0;
    }
    char* p = static_cast<char*>(buffer);
    std::size_t got = 0;
    while (got < size) {
        DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(size - got, DWORD(1) << 30));
        DWORD n = 0;
        if (!ReadFile(static_cast<HANDLE>(handle_), p + got, chunk, &n, nullptr)) {
            DWORD e = GetLastError();
            if (e == ERROR_HANDLE_EOF) break;
            if (error) *error = errno_of(e);
            return 0;
        }
        if (n == 0) break;
        got += n;
    }
    return got;
}

void rename_shared_file(const std::filesystem::path& from, const std::filesystem::path& to,
                        std::error_code& ec) {
    ec.clear();
    if (!MoveFileExW(from.wstring().c_str(), to.wstring().c_str(), MOVEFILE_REPLACE_EXISTING))
        ec.assign(errno_of(GetLastError()), std::generic_category());
}

void remove_shared_file(const std::filesystem::path& path, std::error_code& ec) {
    ec.clear();
    static std::atomic<unsigned> counter{0};
    std::wstring name = path.wstring();
    // A deleted file that is still open keeps its name until its last handle closes: away
    // with the name first, so that the file can be made again at once.
    std::wstring away = name + L".deleted-" + std::to_wstring(GetCurrentProcessId()) + L"-" +
                        std::to_wstring(counter.fetch_add(1));
    const std::wstring& target = MoveFileExW(name.c_str(), away.c_str(), 0) ? away : name;
    if (DeleteFileW(target.c_str())) return;
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return;
    if (&target == &away) MoveFileExW(away.c_str(), name.c_str(), 0); // keep the known name
    ec.assign(errno_of(e), std::generic_category());
}

} // namespace cvm::platform
