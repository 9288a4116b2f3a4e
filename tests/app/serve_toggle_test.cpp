// "Serve this model": the toggle starts hearth-server's routes on the app's
// own engine (a tiny synthetic model on the CPU), shows the URL, answers a
// real HTTP client there, stops when toggled off and when the model goes.
#include <QApplication>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUrl>

#include <httplib.h>

#include "app/app_settings.h"
#include "app/engine_bridge.h"
#include "app/serve_toggle.h"
#include "models/synthetic.h"
#include "test_env.h"

using namespace hearth::app;
namespace models = hearth::models;

class ServeToggleTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    models::SyntheticSpec spec;
    spec.shape = {"custom", 128, 2, 4, 2, 256, 300, 512, 10000.0f, 1e-5f, false};
    spec.quant = models::parse_synthetic_quant("Q8_0").value();
    model_path_ = dir_.filePath(QStringLiteral("tiny-q8_0.gguf"));
    QVERIFY(models::write_synthetic_model(spec, model_path_.toStdString()).ok());
  }

  void servesTheLoadedModelAndStops() {
    EngineBridge bridge;
    ServeToggle toggle(bridge);
    ServeOptions options;
    options.port = 0;  // any free port
    toggle.setOptions(options);
    auto* button = toggle.findChild<QToolButton*>(QStringLiteral("serveButton"));
    auto* url = toggle.findChild<QLabel*>(QStringLiteral("serveUrl"));
    QVERIFY(!button->isEnabled());  // nothing to serve yet
    QSignalSpy loaded(&bridge, &EngineBridge::modelLoaded);
    hearth::settings::Settings s;
    s.device = "cpu";
    s.context_length = 256;
    bridge.loadModel(model_path_, run_config_of(s));
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QTRY_VERIFY(button->isEnabled());

    QSignalSpy serving(&bridge, &EngineBridge::servingChanged);
    button->click();
    QTRY_COMPARE(serving.count(), 1);
    const QString served = serving.at(0).at(0).toString();
    QVERIFY2(served.startsWith(QStringLiteral("http://127.0.0.1:")) && served.endsWith(QStringLiteral("/v1")),
             qPrintable(served + serving.at(0).at(1).toString()));
    QCOMPARE(url->text(), served);
    QVERIFY(!url->isHidden());
    QVERIFY(button->isChecked());

    const QUrl where(served);
    httplib::Client client("127.0.0.1", where.port());
    auto listed = client.Get("/v1/models");
    QVERIFY(listed);
    QCOMPARE(listed->status, 200);
    QVERIFY2(listed->body.find("tiny-q8_0") != std::string::npos, listed->body.c_str());
    auto answered = client.Post("/v1/completions", R"({"model": "tiny-q8_0", "prompt": "hi", "max_tokens": 2})",
                                "application/json");
    QVERIFY(answered);
    QCOMPARE(answered->status, 200);

    button->click();  // off
    QTRY_COMPARE(serving.count(), 2);
    QCOMPARE(serving.at(1).at(0).toString(), QString());
    QVERIFY(url->isHidden());
    QVERIFY(!httplib::Client("127.0.0.1", where.port()).Get("/health"));  // nothing listens there now

    button->click();  // on again, then the model goes: serving stops and says why
    QTRY_COMPARE(serving.count(), 3);
    QSignalSpy failed(&toggle, &ServeToggle::failed);
    bridge.unloadModel();
    QTRY_COMPARE(serving.count(), 4);
    QCOMPARE(serving.at(3).at(0).toString(), QString());
    QCOMPARE(failed.count(), 1);
    QVERIFY(!button->isChecked());
    QTRY_VERIFY(!button->isEnabled());
  }

 private:
  QTemporaryDir dir_;
  QString model_path_;
};

HEARTH_APP_TEST_MAIN(ServeToggleTest)
#include "serve_toggle_test.moc"
