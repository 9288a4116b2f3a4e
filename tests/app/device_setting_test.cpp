// The device setting on its way to the engine: settings -> RunConfig ->
// EngineBridge -> models::open_engine, and back as the LoadedModel the model
// bar shows. Without a GPU, "cpu" and "auto" both give the CPU, and "auto"
// says why. The device menu lists the CPU and each CUDA device.
#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/app_settings.h"
#include "app/engine_bridge.h"
#include "app/model_bar.h"
#include "hearth/devices.h"
#include "models/synthetic.h"
#include "test_env.h"

using namespace hearth::app;
namespace models = hearth::models;
namespace settings = hearth::settings;

class DeviceSettingTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    models::SyntheticSpec spec;
    spec.shape = {"custom", 128, 2, 4, 2, 256, 300, 512, 10000.0f, 1e-5f, false};
    spec.quant = models::parse_synthetic_quant("Q8_0").value();
    model_path_ = dir_.filePath(QStringLiteral("tiny-q8_0.gguf"));
    QVERIFY(models::write_synthetic_model(spec, model_path_.toStdString()).ok());
  }

  void settingsMapOntoTheRunConfig() {
    settings::Settings s;
    s.device = "cuda:1";
    s.context_length = 2048;
    s.kv_precision = hearth::KvPrecision::kFp8E4M3;
    const models::RunConfig c = run_config_of(s);
    QCOMPARE(c.device, std::string("cuda:1"));
    QCOMPARE(c.context_length, 2048);
    QCOMPARE(c.kv_precision, hearth::KvPrecision::kFp8E4M3);
    QCOMPARE(c.max_sequences, 4);                                               // the app's batch limit
    QCOMPARE(run_config_of(settings::Settings{}).device, std::string("auto"));  // the default
    // The settings file spells the one enum by its names.
    const auto back = settings::from_json_text(settings::to_json_text(s));
    QCOMPARE(back.settings.kv_precision, hearth::KvPrecision::kFp8E4M3);
    QVERIFY(settings::to_json_text(s).find("\"kv_precision\": \"fp8\"") != std::string::npos);
  }

  void cpuSettingRunsOnTheCpu() {
    const LoadedModel m = load("cpu");
    QCOMPARE(m.device, QStringLiteral("cpu"));
    QCOMPARE(m.device_reason, QString());  // asked for: nothing to explain
    QCOMPARE(m.quantization, QStringLiteral("Q8_0"));
    QCOMPARE(m.kv_precision, QStringLiteral("f16"));
  }

  void autoWithoutAGpuRunsOnTheCpuAndSaysWhy() {
    if (hearth::list_devices().size() > 1) QSKIP("a CUDA device is present");
    const LoadedModel m = load("auto");
    QCOMPARE(m.device, QStringLiteral("cpu"));
    QVERIFY2(m.device_reason.startsWith(QStringLiteral("auto: ")), qPrintable(m.device_reason));
    QVERIFY2(m.device_reason.contains(QStringLiteral("CUDA")), qPrintable(m.device_reason));
    ModelBar bar;
    bar.setLoaded(m);
    QCOMPARE(bar.findChild<QLabel*>(QStringLiteral("deviceLabel"))->text(), QStringLiteral("CPU"));
    QCOMPARE(bar.findChild<QLabel*>(QStringLiteral("deviceReasonLabel"))->text(), m.device_reason);
    QVERIFY(bar.findChild<QLabel*>(QStringLiteral("quantLabel"))->text().contains(QStringLiteral("KV f16")));
  }

  // The CPU runs a q8_0 KV cache; the model bar says so.
  void q8KvRunsOnTheCpuAndTheBarSaysSo() {
    settings::Settings s;
    s.device = "cpu";
    s.kv_precision = hearth::KvPrecision::kQ8_0;
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::modelLoaded);
    QSignalSpy failed(&bridge, &EngineBridge::loadFailed);
    bridge.loadModel(model_path_, run_config_of(s));
    QTRY_COMPARE(loaded.count() + failed.count(), 1);
    QCOMPARE(failed.count(), 0);
    const auto m = loaded.at(0).at(0).value<LoadedModel>();
    ModelBar bar;
    bar.setLoaded(m);
    QVERIFY2(bar.findChild<QLabel*>(QStringLiteral("quantLabel"))->text().contains(QStringLiteral("KV q8_0")),
             qPrintable(bar.findChild<QLabel*>(QStringLiteral("quantLabel"))->text()));
  }

  void deviceMenuListsTheCpuAndEachGpu() {
    ModelBar bar;
    // Without CUDA (here): Automatic and the CPU only.
    QMenu* menu = bar.deviceMenu();
    QMetaObject::invokeMethod(menu, "aboutToShow");  // the menu is filled as it opens
    QCOMPARE(checkable(menu).size(), static_cast<qsizetype>(1 + hearth::list_devices().size()));
    QCOMPARE(checkable(menu)[1]->data().toString(), QStringLiteral("cpu"));
    bar.setDeviceLister([] {
      hearth::DeviceInfo cpu{"cpu", "CPU (test)", false, -1, std::size_t{8} << 30, std::size_t{16} << 30};
      hearth::DeviceInfo gpu{"cuda:0", "NVIDIA Test", true, 0, std::size_t{20} << 30, std::size_t{24} << 30};
      return std::vector<hearth::DeviceInfo>{cpu, gpu};
    });
    bar.setDeviceSetting(QStringLiteral("cpu"));
    QMetaObject::invokeMethod(menu, "aboutToShow");
    const QList<QAction*> actions = checkable(menu);
    QCOMPARE(actions.size(), 3);
    QCOMPARE(actions[0]->data().toString(), QStringLiteral("auto"));
    QVERIFY(actions[1]->isChecked());  // the current setting
    QVERIFY2(actions[2]->text().contains(QStringLiteral("NVIDIA Test")) &&
                 actions[2]->text().contains(QStringLiteral("free")),
             qPrintable(actions[2]->text()));
    QSignalSpy chosen(&bar, &ModelBar::deviceChosen);
    actions[2]->trigger();
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(chosen.at(0).at(0).toString(), QStringLiteral("cuda:0"));
    QCOMPARE(bar.deviceSetting(), QStringLiteral("cuda:0"));
  }

 private:
  static QList<QAction*> checkable(QMenu* menu) {
    QList<QAction*> out;
    for (QAction* a : menu->actions()) {
      if (a->isCheckable()) out.push_back(a);
    }
    return out;
  }

  // Loads the synthetic model with the settings' device; the LoadedModel reported.
  LoadedModel load(const char* device) {
    settings::Settings s;
    s.device = device;
    s.context_length = 256;
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::modelLoaded);
    QSignalSpy failed(&bridge, &EngineBridge::loadFailed);
    bridge.loadModel(model_path_, run_config_of(s));
    [&] { QTRY_VERIFY(loaded.count() + failed.count() == 1); }();
    if (failed.count() > 0) qWarning() << failed.at(0).at(1).toString();
    return loaded.count() > 0 ? loaded.at(0).at(0).value<LoadedModel>() : LoadedModel{};
  }

  QTemporaryDir dir_;
  QString model_path_;
};

HEARTH_APP_TEST_MAIN(DeviceSettingTest)
#include "device_setting_test.moc"
