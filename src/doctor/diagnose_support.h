#pragma once
// What the doctor's checks share: the OS's rules for variable names and folder text, the line
// that tells how a shell gets the selection's environment, and adding a finding to the report.

#include "diagnosis.h"
#include "finding.h"

#include "platform/platform.h"

#include <map>
#include <optional>
#include <string>

namespace cvm::doctor {

using Env = std::map<std::string, std::string>;

// A variable's value, its name compared as the OS does (any case on Windows).
std::optional<std::string> env_get(const Env& env, const std::string& name, platform::Os os);

// Folder text compared as the OS compares paths: '\' and '/' alike and any case on Windows.
std::string folded(std::string s, platform::Os os);

bool is_under(const std::string& path, const std::string& dir, platform::Os os);

// How a shell gets the selection's environment and keeps following the folder: the prompt hook
// of `cvm init` (never `cvm env`, which would pin the shell to one version across `cd`).
std::string shell_hint(platform::Os os, const Env& env);

void add_finding(DoctorReport& report, Severity s, std::string code, std::string message,
                 std::string fix = "");

} // namespace cvm::doctor
