// Untrusted text (file names, case names, metadata, messages built from them) made safe for a
// terminal and for XML: control characters (C0 but tab and newline, DEL, C1), the non-characters
// U+FFFE / U+FFFF and bytes that are not well-formed UTF-8 become visible escapes ("\x1b"), so
// nothing reaches a terminal as a command, cuts a report short (NUL), or makes a JUnit file invalid.
#pragma once

#include <string>
#include <string_view>

namespace pmqa::cases {

// keep_newlines: tabs and newlines stay as they are (multi-line reports); otherwise escaped too.
std::string printable(std::string_view text, bool keep_newlines = true);

}  // namespace pmqa::cases
