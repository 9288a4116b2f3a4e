// Light and dark themes (Fusion style with a palette, plus a small style sheet
// for the chat bubbles, code blocks, chips and banner). "System" follows the
// palette the platform gave the application at start-up.
#pragma once

#include <QString>

class QApplication;

namespace hearth::app {

enum class Theme { kSystem, kLight, kDark };

Theme theme_from_string(const QString& name);  // "light", "dark"; anything else: kSystem
QString to_string(Theme theme);

// Remembers the platform's palette the first time it is called.
// Returns true when the applied theme is dark.
bool apply_theme(QApplication& app, Theme theme);

}  // namespace hearth::app
