// The frame every nccltune HTML page shares: a self-contained head (its style inline) and the
// footer that names what generated it.
#pragma once

#include <string>
#include <string_view>

namespace nccltune {

// From <!DOCTYPE html> to the opening <main>, with `title` escaped and `style` placed as is (the
// page's own constant, never outside text).
std::string html_page_head(const std::string& title, std::string_view style);

// The footer naming `generated_by` (escaped), then the closing </main>, </body> and </html>.
std::string html_page_foot(const std::string& generated_by);

}  // namespace nccltune
