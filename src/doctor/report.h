#pragma once
// The two faces of a DoctorReport: a short text for people (colour on a terminal) and a JSON
// document with the same content.

#include "text_layout.h"
#include "diagnose.h"

#include <nlohmann/json.hpp>

#include <string>

namespace cvm::doctor {

nlohmann::json report_json(const DoctorReport& report);
// `layout` (text_layout.h): the terminal's width and the paths to shorten; none by default.
std::string report_text(const DoctorReport& report, bool colour, const TextLayout& layout = {});

} // namespace cvm::doctor
