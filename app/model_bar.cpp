#include "app/model_bar.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>

#include "models/catalog.h"

namespace hearth::app {

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
  models_->setMinimumContentsLength(28);
  models_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  label->setBuddy(models_);
  layout->addWidget(models_);
  open_ = new QToolButton(this);
  open_->setObjectName(QStringLiteral("openModelButton"));
  open_->setText(QStringLiteral("\u2026"));
  open_->setToolTip(tr("Open a GGUF file (Ctrl+O)"));
  layout->addWidget(open_);
  load_ = new QPushButton(tr("Load"), this);
  load_->setObjectName(QStringLiteral("loadButton"));
  unload_ = new QPushButton(tr("Unload"), this);
  unload_->setObjectName(QStringLiteral("unloadButton"));
  layout->addWidget(load_);
  layout->addWidget(unload_);
  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("loadProgress"));
  progress_->setRange(0, 0);  // busy: loading has no measurable steps
  progress_->setMaximumWidth(90);
  progress_->setTextVisible(false);
  progress_->hide();
  layout->addWidget(progress_);
  layout->addStretch(1);
  for (QLabel** l : {&device_, &quant_, &context_}) {
    *l = new QLabel(this);
    (*l)->setProperty("chip", true);
    layout->addWidget(*l);
  }
  device_->setObjectName(QStringLiteral("deviceLabel"));
  quant_->setObjectName(QStringLiteral("quantLabel"));
  context_->setObjectName(QStringLiteral("contextLabel"));
  context_->setToolTip(tr("Context use: tokens of this conversation / context length"));

  connect(open_, &QToolButton::clicked, this, &ModelBar::openFileDialog);
  connect(load_, &QPushButton::clicked, this, [this] {
    if (!selectedPath().isEmpty()) emit loadRequested(selectedPath());
  });
  connect(unload_, &QPushButton::clicked, this, &ModelBar::unloadRequested);
  refreshInstalled();
  setUnloaded();
}

void ModelBar::refreshInstalled() {
  const QString keep = selectedPath();
  models_->clear();
  for (const auto& m : models::installed_models()) {
    const QString path = QString::fromStdString(m.path.string());
    const QString name =
        m.entry ? QString::fromStdString(m.entry->display_name) : QString::fromStdString(m.path.filename().string());
    models_->addItem(QStringLiteral("%1 (%2)").arg(name, format_bytes(static_cast<std::int64_t>(m.size_bytes))), path);
    models_->setItemData(models_->count() - 1, path, Qt::ToolTipRole);
  }
  if (!keep.isEmpty()) selectPath(keep);
}

QString ModelBar::selectedPath() const {
  return models_->currentData().toString();
}

void ModelBar::selectPath(const QString& path) {
  int index = models_->findData(path);
  if (index < 0) {
    models_->addItem(QFileInfo(path).fileName(), path);
    index = models_->count() - 1;
  }
  models_->setCurrentIndex(index);
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
  device_->setText(tr("Loading %1\u2026").arg(QFileInfo(path).fileName()));
  quant_->clear();
  context_->clear();
}

void ModelBar::setLoaded(const LoadedModel& model) {
  progress_->hide();
  for (QWidget* w : {static_cast<QWidget*>(load_), static_cast<QWidget*>(unload_), static_cast<QWidget*>(models_),
                     static_cast<QWidget*>(open_)}) {
    w->setEnabled(true);
  }
  selectPath(model.path);
  device_->setText(model.device);
  device_->setToolTip(tr("%1, %2 architecture").arg(model.name, model.architecture));
  quant_->setText(model.quantization.isEmpty() ? tr("unknown quantization") : model.quantization);
  quant_->setToolTip(tr("Weights file: %1").arg(format_bytes(model.file_bytes)));
  context_length_ = model.context_length;
  showContext();
}

void ModelBar::setUnloaded() {
  progress_->hide();
  load_->setEnabled(true);
  unload_->setEnabled(false);
  models_->setEnabled(true);
  open_->setEnabled(true);
  device_->setText(tr("No model loaded"));
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
  if (context_length_ > 0) {
    context_->setText(
        tr("Context %1 / %2").arg(QLocale().toString(context_used_), QLocale().toString(context_length_)));
  }
}

}  // namespace hearth::app
