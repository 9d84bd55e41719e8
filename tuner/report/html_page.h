// The frame every nccltune HTML page shares (the report, the fleet page, the upgrade page): a
// self-contained head with the base style inline, and the footer that names what generated it.
#pragma once

#include <string>
#include <string_view>

namespace nccltune {

// The look every page shares: the page frame and its header, sections, tables, code, notes, the
// good/bad colours, charts and the footer. A page adds only the rules of its own parts.
extern const std::string_view kBaseStyle;

// From <!DOCTYPE html> to the opening <main>, with `title` escaped and the style kBaseStyle then
// `own_style`, the page's own rules, placed as is (the page's constant, never outside text).
std::string html_page_head(const std::string& title, std::string_view own_style);

// The footer naming `generated_by` (escaped), then the closing </main>, </body> and </html>.
std::string html_page_foot(const std::string& generated_by);

}  // namespace nccltune
