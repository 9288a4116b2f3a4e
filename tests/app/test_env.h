// Shared set-up of the app's Qt tests: a private config / data / cache folder
// (XDG_* pointed into a temporary directory, QStandardPaths test mode), the
// models folder kept where the real models are, and the offscreen platform
// unless the caller chose one.
#pragma once

#include <QByteArray>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cstdlib>
#include <string>

#include "models/catalog.h"

namespace hearth::app::testing {

// Call before constructing the QApplication. Keeps `dir` alive for the test's life.
inline void isolate_environment(QTemporaryDir& dir) {
  if (qEnvironmentVariableIsEmpty("HEARTH_MODELS_DIR")) {
    qputenv("HEARTH_MODELS_DIR", QByteArray::fromStdString(models::models_dir().string()));
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // Test mode puts config and data under $HOME/.qttest: HOME moves into `dir` too.
  qputenv("HOME", dir.path().toUtf8());
  for (const char* var : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"}) {
    qputenv(var, (dir.path() + QLatin1Char('/') + QLatin1String(var)).toUtf8());
  }
  QStandardPaths::setTestModeEnabled(true);
}

}  // namespace hearth::app::testing

// A main() for a QtTest class that needs the isolated environment.
#define HEARTH_APP_TEST_MAIN(TestClass)                          \
  int main(int argc, char** argv) {                              \
    QTemporaryDir hearth_test_dir;                               \
    hearth::app::testing::isolate_environment(hearth_test_dir);  \
    QApplication app(argc, argv);                                \
    QApplication::setOrganizationName(QStringLiteral("hearth")); \
    QApplication::setApplicationName(QStringLiteral("hearth"));  \
    TestClass test;                                              \
    return QTest::qExec(&test, argc, argv);                      \
  }
