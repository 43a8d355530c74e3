#pragma once
// Programs cvm runs on its own account or remembers for nvcc (host compilers, python3,
// nvidia-smi, apt-cache) follow the trust rules (trust.h), as the entries' programs do
// (entry_trust.h): the program, the folder it is found in and every folder a link chain from it
// leads through must be owned by the user, root or a trusted owner and not writable by others.
// Otherwise another local user could put their own program where cvm looks. One lookup for every
// caller: find_trusted_program() in place of platform::find_program().
#include <filesystem>
#include <string>

namespace cvm {

// Why another user could change `program` ("its folder /opt/x is owned by nobody (uid 65534), not
// by you or root", "it is writable by every user (owner root)"); "" when nobody could. A
// program that does not exist is not doubted (whoever runs it finds it missing). A few stats and a
// readlink per link: the shim asks this of the compiler it hands over.
std::string program_doubt(const std::filesystem::path& program);

// True when `program` may be run or handed over; otherwise one note on stderr, once per program
// and process: "cvm: note: skipped PROGRAM (WHAT): REASON, so another user could change it".
// `what` says what it would have been ("a host compiler", "python3 on PATH").
bool trusted_program(const std::filesystem::path& program, const std::string& what);

// The note trusted_program() prints, for a caller that has program_doubt()'s answer already.
void note_untrusted(const std::filesystem::path& program, const std::string& what,
                    const std::string& why);

// platform::find_program() that skips (with trusted_program()'s note) the programs another user
// could change and goes on to the next folder of the list: the first trusted `name`, or empty.
std::filesystem::path find_trusted_program(const std::string& name, const std::string& path_list,
                                           const std::string& what = {});

} // namespace cvm
