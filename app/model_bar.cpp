#include "app/model_bar.h"

#include <QActionGroup>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>
#include <QUrl>

#include "engine/gguf/gguf_file.h"
#include "models/catalog.h"
#include "models/run_config.h"

namespace hearth::app {

namespace {

// Whether the file reads as a model the engine can plan: a GGUF (complete:
// the reader checks every offset against the file's size) of a known
// architecture. Reads the header and metadata only (the file is mapped).
bool loadable(const std::filesystem::path& path) {
  auto file = gguf::GgufFile::open(path);
  return file && static_cast<bool>(models::plan(**file, models::RunConfig{}, "cpu"));
}

}  // namespace

QString format_bytes(std::int64_t bytes) {
  return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat);
}

ModelBar::ModelBar(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("modelBar"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(8, 4, 8, 4);
  auto* label = new QLabel(tr("Model"), this);
  layout->addWidget(label);
  models_ = new QComboBox(this);
  models_->setObjectName(QStringLiteral("modelCombo"));
  models_->setMinimumContentsLength(12);  // the bar fits a 1024-pixel window with the docks open
  models_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  label->setBuddy(models_);
  layout->addWidget(models_);
  // One button for the ways to get a model (the bar fits a 1024-pixel window with the docks open).
  open_ = new QToolButton(this);
  open_->setObjectName(QStringLiteral("openModelButton"));
  open_->setText(QStringLiteral("\u2026"));
  open_->setToolTip(tr("Open a GGUF file, the model manager, or load with options"));
  open_->setPopupMode(QToolButton::InstantPopup);
  auto* more = new QMenu(open_);
  more->setObjectName(QStringLiteral("modelMoreMenu"));
  more->addAction(tr("Open a GGUF file\u2026 (Ctrl+O)"), this, &ModelBar::openFileDialog);
  manage_ = more->addAction(tr("Model manager\u2026 (Ctrl+Shift+M)"), this, &ModelBar::managerRequested);
  manage_->setObjectName(QStringLiteral("manageModelsAction"));
  manage_->setVisible(false);  // until the main window says the installer is there
  more->addAction(tr("Load with options\u2026 (Ctrl+Shift+O)"), this, &ModelBar::loadOptionsRequested);
  open_->setMenu(more);
  layout->addWidget(open_);
  load_ = new QPushButton(tr("Load"), this);
  load_->setObjectName(QStringLiteral("loadButton"));
  unload_ = new QPushButton(tr("Unload"), this);
  unload_->setObjectName(QStringLiteral("unloadButton"));
  for (QPushButton* b : {load_, unload_}) {
    // The style's 80-pixel minimum for push buttons is more than these words need: with the
    // Serve toggle at the bar's end, the bar still fits a 1024-pixel window with the docks open.
    b->setMinimumWidth(b->fontMetrics().horizontalAdvance(b->text()) + 2 * b->fontMetrics().averageCharWidth() + 8);
    layout->addWidget(b);
  }
  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("loadProgress"));
  progress_->setRange(0, 0);  // busy: loading has no measurable steps
  progress_->setMaximumWidth(90);
  progress_->setTextVisible(false);
  progress_->hide();
  layout->addWidget(progress_);
  layout->addStretch(1);
  device_button_ = new QToolButton(this);
  device_button_->setObjectName(QStringLiteral("deviceButton"));
  device_button_->setPopupMode(QToolButton::InstantPopup);
  device_button_->setToolTip(tr("Device setting: where models run (a loaded model is reloaded on the new one)"));
  device_menu_ = new QMenu(device_button_);
  device_menu_->setObjectName(QStringLiteral("deviceMenu"));
  device_button_->setMenu(device_menu_);
  layout->addWidget(device_button_);
  connect(device_menu_, &QMenu::aboutToShow, this, &ModelBar::fillDeviceMenu);
  for (QLabel** l : {&device_, &reason_, &quant_, &context_}) {
    *l = new QLabel(this);
    (*l)->setProperty("chip", true);
    layout->addWidget(*l);
  }
  device_->setObjectName(QStringLiteral("deviceLabel"));
  reason_->setObjectName(QStringLiteral("deviceReasonLabel"));
  // The reason can be long ("auto: needs 9.1 GiB, NVIDIA ... has 6.0 GiB free"): it takes the
  // room that is left rather than widening the window; the tooltip has it whole.
  reason_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  layout->setStretchFactor(reason_, 8);  // most of the spare room (the stretch before the chips has 1)
  quant_->setObjectName(QStringLiteral("quantLabel"));
  context_->setObjectName(QStringLiteral("contextLabel"));
  context_->setToolTip(tr("Context use: tokens of this conversation / context length"));

  connect(load_, &QPushButton::clicked, this, [this] {
    if (!selectedPath().isEmpty()) emit loadRequested(selectedPath());
  });
  connect(unload_, &QPushButton::clicked, this, &ModelBar::unloadRequested);
  refreshInstalled();
  setDeviceSetting(device_setting_);  // the menu is filled when it opens: asking CUDA is not free
  setUnloaded();
}

void ModelBar::setDeviceSetting(const QString& device) {
  device_setting_ = device;
  // Short (the bar must fit a narrow window); the tooltip and the menu say the rest.
  device_button_->setText(device == QLatin1String("auto") ? tr("Auto") : device.toUpper());
  for (QAction* a : device_menu_->actions()) a->setChecked(a->data().toString() == device);
}

void ModelBar::setManagerAvailable(bool available) {
  manage_->setVisible(available);
}

void ModelBar::fillDeviceMenu() {
  device_menu_->clear();
  for (QActionGroup* old : device_menu_->findChildren<QActionGroup*>()) delete old;
  auto* group = new QActionGroup(device_menu_);
  const auto add = [&](const QString& id, const QString& text) {
    QAction* a = device_menu_->addAction(text);
    a->setData(id);
    a->setCheckable(true);
    a->setChecked(id == device_setting_);
    group->addAction(a);
    connect(a, &QAction::triggered, this, [this, id] {
      setDeviceSetting(id);
      emit deviceChosen(id);
    });
  };
  add(QStringLiteral("auto"), tr("Automatic (CUDA when a GPU is usable and the model fits, else the CPU)"));
  device_menu_->addSeparator();
  for (const DeviceInfo& d : list_devices_()) {
    const QString id = QString::fromStdString(d.id);
    const QString memory = d.total_bytes > 0 ? tr("%1 free").arg(format_bytes(static_cast<std::int64_t>(d.free_bytes)))
                                             : tr("memory unknown");
    const QString name = QString::fromStdString(d.name);
    add(id, d.cuda ? QStringLiteral("%1: %2 \u2014 %3").arg(id, name, memory)
                   : QStringLiteral("%1 \u2014 %2").arg(name, memory));
  }
  device_menu_->addSeparator();
  QAction* remote = device_menu_->addAction(tr("Remote endpoint (OpenAI-compatible server)\u2026"));
  remote->setObjectName(QStringLiteral("remoteEndpointAction"));
  connect(remote, &QAction::triggered, this, &ModelBar::remoteRequested);
}

void ModelBar::refreshInstalled() {
  const QString keep = selectedPath();
  models_->clear();
  for (const auto& m : models::installed_models()) {
    if (!loadable(m.path)) continue;  // only files a Load can open are offered
    const QString path = QString::fromStdString(m.path.string());
    const QString name =
        m.entry ? QString::fromStdString(m.entry->display_name) : QString::fromStdString(m.path.filename().string());
    models_->addItem(QStringLiteral("%1 (%2)").arg(name, format_bytes(static_cast<std::int64_t>(m.size_bytes))), path);
    models_->setItemData(models_->count() - 1, path, Qt::ToolTipRole);
  }
  if (!keep.isEmpty() && QFileInfo::exists(keep)) selectPath(keep);  // a deleted file is not offered again
}

QString ModelBar::selectedPath() const {
  return models_->currentData().toString();
}

QStringList ModelBar::paths() const {
  QStringList out;
  for (int i = 0; i < models_->count(); ++i) out << models_->itemData(i).toString();
  return out;
}

void ModelBar::selectPath(const QString& path) {
  int index = models_->findData(path);
  if (index < 0) {
    models_->addItem(QFileInfo(path).fileName(), path);
    index = models_->count() - 1;
  }
  models_->setCurrentIndex(index);
}

void ModelBar::forgetPath(const QString& path) {
  const int index = models_->findData(path);
  if (index >= 0) models_->removeItem(index);
}

void ModelBar::openFileDialog() {
  const QString start = QString::fromStdString(models::models_dir().string());
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a model"), start, tr("GGUF models (*.gguf);;All files (*)"));
  if (path.isEmpty()) return;
  selectPath(path);
  emit loadRequested(path);
}

void ModelBar::setLoading(const QString& path) {
  progress_->show();
  load_->setEnabled(false);
  unload_->setEnabled(false);
  models_->setEnabled(false);
  open_->setEnabled(false);
  device_->setText(path.contains(QLatin1String("://")) ? tr("Connecting to %1\u2026").arg(path)
                                                       : tr("Loading %1\u2026").arg(QFileInfo(path).fileName()));
  reason_->clear();
  quant_->clear();
  context_->clear();
}

void ModelBar::setLoaded(const LoadedModel& model) {
  progress_->hide();
  for (QWidget* w : {static_cast<QWidget*>(load_), static_cast<QWidget*>(unload_), static_cast<QWidget*>(models_),
                     static_cast<QWidget*>(open_)}) {
    w->setEnabled(true);
  }
  if (!model.endpoint.isEmpty()) return showRemote(model);
  selectPath(model.path);
  device_->setText(model.device == QLatin1String("cpu") ? tr("CPU") : model.device.toUpper());
  QString where = tr("%1, %2 architecture, on %3").arg(model.name, model.architecture, model.device_name);
  if (!model.device_reason.isEmpty()) where += QStringLiteral("\n") + model.device_reason;
  device_->setToolTip(where);
  reason_->setText(model.device_reason);
  reason_->setToolTip(tr("Why the model runs on %1: %2").arg(model.device_name, model.device_reason));
  const QString weights = model.quantization.isEmpty() ? tr("unknown weight format") : model.quantization;
  QString quant = tr("%1 \u00b7 KV %2").arg(weights, model.kv_precision);
  // A fallback chat format is named in the bar itself: the answers depend on it.
  if (model.chat_format.startsWith(QLatin1String("fallback "))) {
    quant += tr(" \u00b7 chat: %1").arg(model.chat_format.section(QLatin1Char(' '), 1, 1));
  }
  quant_->setText(quant);
  quant_->setToolTip(tr("Weights file: %1\nChat format: %2").arg(format_bytes(model.file_bytes), model.chat_format));
  context_length_ = model.context_length;
  showContext();
}

// A remote model: where it runs is the endpoint; the rest is the server's business.
void ModelBar::showRemote(const LoadedModel& model) {
  const QUrl url(model.endpoint);
  device_->setText(
      tr("Remote: %1").arg(url.port() > 0 ? QStringLiteral("%1:%2").arg(url.host()).arg(url.port()) : url.host()));
  device_->setToolTip(tr("%1, served by the OpenAI-compatible endpoint %2\n"
                         "Speed and latency are measured on this side of the network.")
                          .arg(model.name, model.endpoint));
  reason_->clear();
  quant_->setText(tr("%1 \u00b7 remote").arg(model.name));
  quant_->setToolTip(model.endpoint);
  context_length_ = 0;
  showContext();
}

void ModelBar::setUnloaded() {
  progress_->hide();
  load_->setEnabled(true);
  unload_->setEnabled(false);
  models_->setEnabled(true);
  open_->setEnabled(true);
  device_->setText(tr("No model loaded"));
  reason_->clear();
  quant_->clear();
  context_length_ = 0;
  showContext();
}

void ModelBar::setContextUsed(int used_tokens) {
  context_used_ = used_tokens;
  showContext();
}

void ModelBar::showContext() {
  context_->setVisible(context_length_ > 0);
  quant_->setVisible(!quant_->text().isEmpty());
  reason_->setVisible(!reason_->text().isEmpty());
  if (context_length_ > 0) {
    context_->setText(
        tr("Context %1 / %2").arg(QLocale().toString(context_used_), QLocale().toString(context_length_)));
  }
}

}  // namespace hearth::app
