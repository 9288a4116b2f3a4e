#include "app/app_icon.h"

// Q_INIT_RESOURCE cannot be used inside a namespace; a static library's
// resources must be registered by hand, or the linker drops them.
static void init_hearth_resources() {
  Q_INIT_RESOURCE(hearth);
}

namespace hearth::app {

QIcon app_icon() {
  static const QIcon icon = [] {
    init_hearth_resources();
    QIcon i;
    for (int size : {16, 24, 32, 48, 64, 128, 256}) {
      i.addFile(QStringLiteral(":/icons/hearth-%1.png").arg(size), QSize(size, size));
    }
    return i;
  }();
  return icon;
}

}  // namespace hearth::app
