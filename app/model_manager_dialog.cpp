#include "app/model_manager_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

#include "app/model_bar.h"
#include "app/model_install_job.h"
#include "app/model_list_model.h"
#include "models/install/installer.h"

namespace hearth::app {
namespace {

QString time_left(double seconds) {
  const long s = std::lround(seconds);
  return s >= 60 ? QObject::tr("%1 min %2 s left").arg(s / 60).arg(s % 60) : QObject::tr("%1 s left").arg(s);
}

}  // namespace

ModelManagerDialog::ModelManagerDialog(models::Catalog catalog, QWidget* parent)
    : QDialog(parent), model_(new ModelListModel(std::move(catalog), this)), job_(new ModelInstallJob(this)) {
  setObjectName(QStringLiteral("modelManager"));
  setWindowTitle(tr("Model manager"));
  auto* layout = new QVBoxLayout(this);
  auto* where = new QLabel(tr("Models folder: %1").arg(QString::fromStdString(models::models_dir().string())), this);
  where->setObjectName(QStringLiteral("modelsFolderLabel"));
  where->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(where);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("modelTable"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(table_, 1);
  auto* progress_row = new QHBoxLayout;
  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("installProgress"));
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  progress_->hide();
  progress_row->addWidget(progress_, 1);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("installStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_row->addWidget(status_, 2);
  layout->addLayout(progress_row);
  auto* buttons = new QDialogButtonBox(this);
  install_ = buttons->addButton(tr("&Install"), QDialogButtonBox::ActionRole);
  install_->setObjectName(QStringLiteral("installButton"));
  cancel_ = buttons->addButton(tr("&Cancel install"), QDialogButtonBox::ActionRole);
  cancel_->setObjectName(QStringLiteral("cancelInstallButton"));
  delete_ = buttons->addButton(tr("&Delete\u2026"), QDialogButtonBox::ActionRole);
  delete_->setObjectName(QStringLiteral("deleteModelButton"));
  load_ = buttons->addButton(tr("&Load"), QDialogButtonBox::ActionRole);
  load_->setObjectName(QStringLiteral("loadModelButton"));
  buttons->addButton(QDialogButtonBox::Close);
  layout->addWidget(buttons);
  resize(820, 380);

  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::hide);
  connect(install_, &QPushButton::clicked, this, &ModelManagerDialog::install);
  connect(cancel_, &QPushButton::clicked, job_, &ModelInstallJob::cancel);
  connect(delete_, &QPushButton::clicked, this, &ModelManagerDialog::confirmDelete);
  connect(load_, &QPushButton::clicked, this, [this] {
    const QModelIndex i = model_->index(currentRow(), 0);
    if (i.isValid() && i.data(ModelListModel::kInstalledRole).toBool()) {
      emit loadRequested(i.data(ModelListModel::kPathRole).toString());
    }
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &ModelManagerDialog::updateButtons);
  connect(model_, &QAbstractItemModel::modelReset, this, &ModelManagerDialog::updateButtons);
  connect(job_, &ModelInstallJob::progressed, this, &ModelManagerDialog::showProgress);
  connect(job_, &ModelInstallJob::finished, this, &ModelManagerDialog::installFinished);
  if (model_->rowCount() > 0) table_->selectRow(0);
  updateButtons();
}

int ModelManagerDialog::currentRow() const {
  return table_->selectionModel()->currentIndex().row();
}

void ModelManagerDialog::refresh() {
  const QString keep = model_->index(currentRow(), 0).data(ModelListModel::kPathRole).toString();
  model_->refresh();
  for (int r = 0; r < model_->rowCount(); ++r) {
    if (model_->index(r, 0).data(ModelListModel::kPathRole).toString() == keep) table_->selectRow(r);
  }
  updateButtons();
}

void ModelManagerDialog::setLoadedPath(const QString& path) {
  loaded_path_ = path;
  model_->addOpenedFile(path);
  refresh();  // keeps the selection
}

void ModelManagerDialog::updateButtons() {
  const QModelIndex i = model_->index(currentRow(), 0);
  const bool installed = i.isValid() && i.data(ModelListModel::kInstalledRole).toBool();
  const bool busy = job_->running();
  install_->setEnabled(!busy && i.isValid() && model_->entryAt(i.row()) && !installed);
  cancel_->setEnabled(busy);
  const bool in_folder = i.isValid() && i.data(ModelListModel::kInModelsDirRole).toBool();
  const bool is_loaded = installed && i.data(ModelListModel::kPathRole).toString() == loaded_path_;
  delete_->setEnabled(installed && in_folder && !is_loaded &&
                      !(busy && i.data(ModelListModel::kCatalogNameRole) == job_->name()));
  delete_->setToolTip(is_loaded ? tr("The loaded model: unload it first") : QString());
  load_->setEnabled(installed);
}

void ModelManagerDialog::install() {
  const models::CatalogEntry* entry = model_->entryAt(currentRow());
  if (!entry || job_->running()) return;
  status_->setText(tr("Asking the package index for %1\u2026").arg(QString::fromStdString(entry->display_name)));
  progress_->setValue(0);
  progress_->show();
  job_->start(*entry);
  model_->setInstalling(job_->name(), 0);
  updateButtons();
}

void ModelManagerDialog::showProgress(const models::install::InstallProgress& p) {
  using Phase = models::install::InstallProgress::Phase;
  const int permille =
      p.total_bytes > 0
          ? static_cast<int>(1000.0 * static_cast<double>(p.done_bytes) / static_cast<double>(p.total_bytes))
          : 0;
  progress_->setValue(permille);
  model_->setInstalling(job_->name(), permille / 10);
  QString text = p.phase == Phase::kResolving     ? tr("Asking the package index")
                 : p.phase == Phase::kDownloading ? tr("Downloading")
                 : p.phase == Phase::kExtracting  ? tr("Extracting")
                                                  : tr("Verifying the checksum");
  if (p.parts > 1) text += tr(" (part %1 of %2)").arg(p.part).arg(p.parts);
  if (p.total_bytes > 0) {
    text += tr(": %1 of %2")
                .arg(format_bytes(static_cast<qint64>(p.done_bytes)), format_bytes(static_cast<qint64>(p.total_bytes)));
  }
  if (p.phase == Phase::kDownloading && p.bytes_per_second > 0) {
    text += QStringLiteral(" \u00b7 %1/s").arg(format_bytes(static_cast<qint64>(p.bytes_per_second)));
    if (p.seconds_left >= 0) text += QStringLiteral(" \u00b7 ") + time_left(p.seconds_left);
  }
  status_->setText(text);
}

void ModelManagerDialog::installFinished(const QString& name, bool ok, const QString& path, const QString& message) {
  model_->setInstalling(QString(), -1);
  progress_->hide();
  status_->setText(ok ? tr("Installed %1 (checksum verified).").arg(path)
                      : tr("Could not install %1: %2").arg(name, message));
  status_->setProperty("error", !ok);
  refresh();
  if (ok) emit modelsChanged();
}

void ModelManagerDialog::confirmDelete() {
  const QModelIndex i = model_->index(currentRow(), 0);
  if (!delete_->isEnabled() || !i.isValid()) return;
  const QString path = i.data(ModelListModel::kPathRole).toString();
  auto* box = new QMessageBox(QMessageBox::Question, tr("Delete model"),
                              tr("Delete %1 (%2)?\nThe file is removed from the models folder.")
                                  .arg(QFileInfo(path).fileName(), format_bytes(QFileInfo(path).size())),
                              QMessageBox::Yes | QMessageBox::No, this);
  box->setObjectName(QStringLiteral("confirmDelete"));
  box->setDefaultButton(QMessageBox::No);
  box->setAttribute(Qt::WA_DeleteOnClose);
  connect(box, &QMessageBox::finished, this, [this, path](int result) {
    if (result == QMessageBox::Yes) remove(QFileInfo(path).fileName());
  });
  box->open();
}

void ModelManagerDialog::remove(const QString& file_name) {
  auto deleted = models::install::delete_model(file_name.toStdString(), models::models_dir(), model_->catalog());
  status_->setProperty("error", !deleted.ok());
  status_->setText(deleted ? tr("Deleted %1.").arg(QString::fromStdString(deleted->path.string()))
                           : tr("Could not delete: %1").arg(QString::fromStdString(deleted.error().message)));
  refresh();
  if (deleted) emit modelsChanged();
}

}  // namespace hearth::app
