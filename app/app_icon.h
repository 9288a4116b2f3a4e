#pragma once
// Hearth's application icon, from the Qt resources compiled out of
// resources/hearth.qrc (the same artwork as the desktop entry's icon).
#include <QIcon>

namespace hearth::app {

// Every size of the icon; never null once the resources are linked in.
QIcon app_icon();

}  // namespace hearth::app
