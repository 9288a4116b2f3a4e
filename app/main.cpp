// hearth: the desktop app. `hearth [MODEL]` opens the main window on MODEL (a
// path or catalog name), else the last model used, else the catalog default.
// Qt's standard options (-platform, -style, ...) are honoured.
#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>
#include <cstring>

#include "app/app_icon.h"
#include "app/main_window.h"

int main(int argc, char** argv) {
  // Answer --version before QApplication, which needs a display.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "-v") == 0) {
      std::printf("hearth %s\n", HEARTH_VERSION);
      return 0;
    }
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("hearth"));
  QApplication::setApplicationName(QStringLiteral("hearth"));
  QApplication::setApplicationDisplayName(QStringLiteral("Hearth"));
  QApplication::setApplicationVersion(QStringLiteral(HEARTH_VERSION));
  QApplication::setWindowIcon(hearth::app::app_icon());
  // Matches the desktop entry's file name, so the shell pairs the window with its launcher and icon.
  QGuiApplication::setDesktopFileName(QStringLiteral("hearth"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Hearth: chat with a local language model."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("GGUF file or catalog name to load"),
                               QStringLiteral("[MODEL]"));
  const QCommandLineOption theme({QStringLiteral("theme")}, QStringLiteral("system, light or dark"),
                                 QStringLiteral("theme"));
  const QCommandLineOption database({QStringLiteral("database")},
                                    QStringLiteral("Conversation database file (default: in the data folder)"),
                                    QStringLiteral("file"));
  const QCommandLineOption no_load({QStringLiteral("no-load")}, QStringLiteral("Start without loading a model"));
  parser.addOptions({theme, database, no_load});
  parser.process(app);

  hearth::app::MainWindowOptions options;
  if (!parser.positionalArguments().isEmpty()) options.model = parser.positionalArguments().constFirst();
  if (parser.isSet(theme)) options.theme = hearth::app::theme_from_string(parser.value(theme));
  options.database_path = parser.value(database);
  options.load_model = !parser.isSet(no_load);
  hearth::app::MainWindow window(options);
  window.show();
  return QApplication::exec();
}
