// The profiler dock (issue 19) on the offscreen platform: while a generation
// runs on a synthetic model with profiling on, the engine's profile window,
// polled from the UI thread as the app polls its stats, fills the heat map
// (one row per layer, time in every kind a layer runs); the normalisation
// switch changes the colours; hovering text names the cell's numbers.
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <atomic>
#include <filesystem>
#include <memory>

#include <unistd.h>

#include "app/profiler_dock.h"
#include "app/profiler_heatmap.h"
#include "hearth/engine.h"
#include "models/run_config.h"
#include "models/synthetic.h"
#include "test_env.h"

namespace hearth::app {
namespace {

class DoneSink final : public Sink {
 public:
  void on_text(const TextEvent&) override {}
  void on_finish(const FinishEvent&) override { done = true; }
  std::atomic<bool> done{false};
};

}  // namespace

class ProfilerDockTest : public QObject {
  Q_OBJECT

 private slots:
  void fillsWhileAGenerationRuns() {
    models::SyntheticSpec spec;
    spec.shape = {"custom", 256, 3, 4, 2, 512, 600, 1024, 10000.0f, 1e-5f, false};
    spec.quant = models::parse_synthetic_quant("Q8_0").value();
    const auto path =
        std::filesystem::temp_directory_path() / ("hearth-profiler-dock-" + std::to_string(::getpid()) + ".gguf");
    QVERIFY(models::write_synthetic_model(spec, path).ok());
    models::RunConfig config;
    config.device = "cpu";
    config.threads = 2;
    config.context_length = 512;
    auto opened = models::open_engine(path.string(), config);
    QVERIFY(opened.ok());
    std::unique_ptr<Engine> engine = std::move(opened->engine);

    ProfilerDock dock;
    dock.resize(500, 300);
    dock.show();
    ProfilerHeatMap* map = dock.findChild<ProfilerHeatMap*>(QStringLiteral("profilerHeatMap"));
    QVERIFY(map != nullptr);
    QCOMPARE(map->rows(), 0);

    engine->set_profiling(ProfileOptions{true, 8});
    Request r;
    r.prompt_tokens = {10, 11, 12, 13};
    r.max_tokens = 400;  // runs long enough to be watched; cancelled below
    r.ignore_eos = true;
    auto sink = std::make_shared<DoneSink>();
    const RequestId id = engine->submit(std::move(r), sink);
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &dock, [&] { dock.setReport(engine->profile()); });
    poll.start(20);
    QTRY_VERIFY_WITH_TIMEOUT(map->rows() == 3 && map->value(2, 1) > 0 && map->value(0, 4) > 0, 20000);
    QVERIFY(!sink->done.load());  // filled during the generation, not after it
    engine->cancel(id);
    QTRY_VERIFY_WITH_TIMEOUT(sink->done.load(), 20000);
    poll.stop();
    dock.setReport(engine->profile());

    QCOMPARE(map->columns(), 7);
    QCOMPARE(map->columnKind(1), KernelKind::kMatmul);
    double top = 0;
    for (int row = 0; row < map->rows(); ++row) {
      for (int c = 0; c < map->columns(); ++c) {
        QVERIFY(map->normalized(row, c) >= 0.0 && map->normalized(row, c) <= 1.0);
        top = std::max(top, map->normalized(row, c));
      }
    }
    QCOMPARE(top, 1.0);  // min-max: the largest cell is the top of the scale
    const double minmax = map->normalized(0, 1);
    auto* mode = dock.findChild<QComboBox*>(QStringLiteral("profilerNormalization"));
    QVERIFY(mode != nullptr);
    mode->setCurrentIndex(1);
    QCOMPARE(map->normalization(), ProfilerHeatMap::Normalization::kZScore);
    QVERIFY(map->normalized(0, 1) != minmax);
    QVERIFY(map->normalized(0, 1) > 0.5);  // the products dominate their layer: above its mean
    QVERIFY(map->cellText(1, 1).contains(QStringLiteral("layer 1, matmul")));
    auto* summary = dock.findChild<QLabel*>(QStringLiteral("profilerSummary"));
    QVERIFY(summary != nullptr && summary->text().contains(QStringLiteral("steps")));
    std::filesystem::remove(path);
  }
};

}  // namespace hearth::app

HEARTH_APP_TEST_MAIN(hearth::app::ProfilerDockTest)
#include "profiler_dock_test.moc"
