#include "app/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace hearth::app {
namespace {

QPalette dark_palette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31), base(0x1f, 0x21, 0x24), text(0xe6, 0xe6, 0xe6);
  const QColor disabled(0x80, 0x80, 0x80), highlight(0x3d, 0x7e, 0xdb);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x33, 0x36, 0x3b));
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xf0));
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Mid, QColor(0x45, 0x48, 0x4e));
  p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
    p.setColor(QPalette::Disabled, role, disabled);
  }
  return p;
}

QString style_sheet(bool dark) {
  const QString user_bg = dark ? QStringLiteral("#2f3a4a") : QStringLiteral("#e8f0fc");
  const QString answer_bg = dark ? QStringLiteral("#26282c") : QStringLiteral("#ffffff");
  const QString border = dark ? QStringLiteral("#3a3d42") : QStringLiteral("#dcdfe4");
  const QString code_bg = dark ? QStringLiteral("#17181a") : QStringLiteral("#f4f5f7");
  const QString muted = dark ? QStringLiteral("#9aa0a6") : QStringLiteral("#6b7078");
  const QString chat_bg = dark ? QStringLiteral("#1f2124") : QStringLiteral("#f7f8fa");
  return QStringLiteral(
             "#chatContent { background: %6; }"
             "QFrame[bubble=\"true\"] { border: 1px solid %3; border-radius: 8px; background: %2; }"
             "QFrame[bubble=\"true\"][role=\"user\"] { background: %1; }"
             "QFrame[bubble=\"true\"][highlighted=\"true\"] { border: 2px solid palette(highlight); }"
             "QFrame#codeBlock { background: %4; border: 1px solid %3; border-radius: 6px; }"
             "QLabel[muted=\"true\"] { color: %5; }"
             "QLabel#statsLabel { font-size: 8.5pt; }"
             "QLabel[chip=\"true\"] { border: 1px solid %3; border-radius: 9px; padding: 1px 8px; }"
             "QFrame#banner { border-radius: 6px; padding: 2px; }"
             "QFrame#banner[kind=\"error\"] { background: %7; }"
             "QFrame#banner[kind=\"info\"] { background: %8; }")
      .arg(user_bg, answer_bg, border, code_bg, muted, chat_bg,
           dark ? QStringLiteral("#5a2a2a") : QStringLiteral("#fde2e1"),
           dark ? QStringLiteral("#2a3f5a") : QStringLiteral("#e3eefc"));
}

}  // namespace

Theme theme_from_string(const QString& name) {
  if (name.compare(QLatin1String("light"), Qt::CaseInsensitive) == 0) return Theme::kLight;
  if (name.compare(QLatin1String("dark"), Qt::CaseInsensitive) == 0) return Theme::kDark;
  return Theme::kSystem;
}

QString to_string(Theme theme) {
  switch (theme) {
    case Theme::kLight:
      return QStringLiteral("light");
    case Theme::kDark:
      return QStringLiteral("dark");
    case Theme::kSystem:
      break;
  }
  return QStringLiteral("system");
}

bool apply_theme(QApplication& app, Theme theme) {
  static const QPalette system_palette = QApplication::palette();
  static const bool system_dark = system_palette.color(QPalette::Window).lightness() < 128;
  const bool dark = theme == Theme::kDark || (theme == Theme::kSystem && system_dark);
  app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  if (theme == Theme::kSystem) {
    app.setPalette(system_dark ? dark_palette() : system_palette);
  } else {
    app.setPalette(dark ? dark_palette() : app.style()->standardPalette());
  }
  app.setStyleSheet(style_sheet(dark));
  return dark;
}

}  // namespace hearth::app
