#pragma once
// The two faces of a DoctorReport: a short text for people (colour on a terminal) and a JSON
// document with the same content.

#include "diagnose.h"

#include <nlohmann/json.hpp>

#include <string>

namespace cvm::doctor {

nlohmann::json report_json(const DoctorReport& report);
std::string report_text(const DoctorReport& report, bool colour);

} // namespace cvm::doctor
