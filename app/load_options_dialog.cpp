#include "app/load_options_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/gguf/gguf_file.h"
#include "hearth/devices.h"
#include "models/architecture.h"
#include "models/catalog.h"
#include "models/weight_convert.h"
#include "models/weight_format.h"

namespace hearth::app {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30))
    return QStringLiteral("%1 GiB").arg(static_cast<double>(bytes) / (1 << 30), 0, 'f', 1);
  if (bytes >= (std::size_t{1} << 20))
    return QStringLiteral("%1 MiB").arg(static_cast<double>(bytes) / (1 << 20), 0, 'f', 0);
  return QStringLiteral("%1 KiB").arg(static_cast<double>(bytes) / (1 << 10), 0, 'f', 0);
}

// The formats a load can convert to, finest first (models/weight_convert.h).
constexpr const char* kFormats[] = {"Q8_0", "Q6_K", "Q5_1", "Q5_K", "Q5_0", "Q4_1", "Q4_K", "Q4_0"};

KvPrecision kv_of(const QString& name) {
  if (name == QLatin1String("q8_0")) return KvPrecision::kQ8_0;
  if (name == QLatin1String("fp8")) return KvPrecision::kFp8E4M3;
  return KvPrecision::kF16;
}

Result<models::Recommendation> recommend_for(const std::string& model, const models::RunConfig& base) {
  HEARTH_ASSIGN_OR_RETURN(const auto path, models::resolve_model(model));
  HEARTH_ASSIGN_OR_RETURN(const auto file, gguf::GgufFile::open(path));
  return models::recommend(*file, models::this_machine(true), base);
}

}  // namespace

LoadOptionsDialog::LoadOptionsDialog(const QStringList& models, const QString& current, const models::RunConfig& config,
                                     QWidget* parent)
    : QDialog(parent), base_(config) {
  setObjectName(QStringLiteral("loadOptionsDialog"));
  setWindowTitle(tr("Load with options"));
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  model_ = new QComboBox(this);
  model_->setObjectName(QStringLiteral("loadModel"));
  for (const QString& m : models) model_->addItem(QFileInfo(m).fileName().isEmpty() ? m : QFileInfo(m).fileName(), m);
  if (!current.isEmpty() && model_->findData(current) < 0) model_->addItem(QFileInfo(current).fileName(), current);
  form->addRow(tr("Model"), model_);
  device_ = new QComboBox(this);
  device_->setObjectName(QStringLiteral("loadDevice"));
  device_->addItem(tr("Automatic (a GPU where it fits, else the CPU)"), QStringLiteral("auto"));
  for (const DeviceInfo& d : list_devices()) {
    device_->addItem(tr("%1: %2, %3 free").arg(qs(d.id), qs(d.name), size_text(d.free_bytes)), qs(d.id));
  }
  form->addRow(tr("Device"), device_);
  format_ = new QComboBox(this);
  format_->setObjectName(QStringLiteral("loadFormat"));
  form->addRow(tr("Weights"), format_);
  kv_ = new QComboBox(this);
  kv_->setObjectName(QStringLiteral("loadKv"));
  kv_->addItem(tr("f16 (exact)"), QStringLiteral("f16"));
  kv_->addItem(tr("q8_0 (8-bit, a scale per 32 values)"), QStringLiteral("q8_0"));
  kv_->addItem(tr("fp8 E4M3 (8-bit, a scale per layer)"), QStringLiteral("fp8"));
  form->addRow(tr("KV cache"), kv_);
  context_ = new QSpinBox(this);
  context_->setObjectName(QStringLiteral("loadContext"));
  context_->setRange(256, 1 << 20);
  context_->setSingleStep(1024);
  context_->setSuffix(tr(" tokens"));
  form->addRow(tr("Context"), context_);
  layout->addLayout(form);

  estimate_ = new QLabel(this);
  estimate_->setObjectName(QStringLiteral("loadEstimate"));
  estimate_->setWordWrap(true);
  estimate_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(estimate_);
  verdict_ = new QLabel(this);
  verdict_->setObjectName(QStringLiteral("loadVerdict"));
  verdict_->setWordWrap(true);
  layout->addWidget(verdict_);
  suggestion_box_ = new QVBoxLayout;
  layout->addLayout(suggestion_box_);

  recommended_ = new QLabel(tr("Working out what suits this machine\u2026"), this);
  recommended_->setObjectName(QStringLiteral("loadRecommended"));
  recommended_->setWordWrap(true);
  recommended_->setProperty("muted", true);
  layout->addWidget(recommended_);
  use_recommended_ = new QPushButton(tr("Use recommended"), this);
  use_recommended_->setObjectName(QStringLiteral("loadUseRecommended"));
  use_recommended_->setEnabled(false);
  layout->addWidget(use_recommended_, 0, Qt::AlignLeft);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  load_ = buttons->addButton(tr("Load"), QDialogButtonBox::AcceptRole);
  load_->setObjectName(QStringLiteral("loadAccept"));
  load_->setDefault(true);
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(use_recommended_, &QPushButton::clicked, this, &LoadOptionsDialog::useRecommended);
  connect(&watcher_, &QFutureWatcher<std::optional<models::Recommendation>>::finished, this, [this] {
    recommendation_ = watcher_.result();
    showRecommendation();
  });

  filling_ = true;
  select(model_, current);
  select(device_, qs(config.device));
  select(kv_, QString::fromLatin1(to_string(config.kv_precision)));
  context_->setValue(config.context_length > 0 ? config.context_length : 4096);
  fillFormats();
  select(format_, qs(config.quant));
  filling_ = false;
  const auto changed = [this] { reestimate(); };
  connect(model_, &QComboBox::currentIndexChanged, this, [this] {
    fillFormats();
    reestimate();
  });
  connect(device_, &QComboBox::currentIndexChanged, this, changed);
  connect(format_, &QComboBox::currentIndexChanged, this, changed);
  connect(kv_, &QComboBox::currentIndexChanged, this, changed);
  connect(context_, &QSpinBox::valueChanged, this, changed);
  reestimate();
}

void LoadOptionsDialog::select(QComboBox* box, const QVariant& value) {
  const int i = box->findData(value);
  if (i >= 0) box->setCurrentIndex(i);
}

QString LoadOptionsDialog::model() const {
  return model_->currentData().toString();
}

models::RunConfig LoadOptionsDialog::config() const {
  models::RunConfig c = base_;
  c.device = device_->currentData().toString().toStdString();
  c.quant = format_->currentData().toString().toStdString();
  c.kv_precision = kv_of(kv_->currentData().toString());
  c.context_length = context_->value();
  return c;
}

QString LoadOptionsDialog::verdict() const {
  return verdict_->text();
}

// The file's own format, then each coarser one it converts to with its size;
// a finer format (or one the rows do not divide into) is listed disabled,
// with the reason as its tooltip. Also sets the context's range to the
// model's trained context. A new recommendation is worked out for the model.
void LoadOptionsDialog::fillFormats() {
  const bool was_filling = std::exchange(filling_, true);
  const QString kept = format_->currentData().toString();
  format_->clear();
  const std::string name = model().toStdString();
  auto path = models::resolve_model(name);
  auto file = path ? gguf::GgufFile::open(*path) : Result<std::unique_ptr<gguf::GgufFile>>(path.error());
  if (!file) {
    format_->addItem(tr("As stored"), QString());
  } else {
    format_->addItem(tr("As stored (%1)").arg(qs(models::weight_format_of(**file))), QString());
    auto* items = qobject_cast<QStandardItemModel*>(format_->model());
    for (const char* f : kFormats) {
      const auto type = models::parse_weight_quant(f);
      if (!type) continue;
      const auto planned = models::plan_conversion(**file, *type);
      if (planned && planned->matrices == 0) continue;  // already that format
      format_->addItem(planned
                           ? tr("%1, converted at load (%2)").arg(QLatin1String(f), size_text(planned->weights_bytes))
                           : tr("%1 (not possible)").arg(QLatin1String(f)),
                       QLatin1String(f));
      if (!planned && items != nullptr) {
        QStandardItem* item = items->item(format_->count() - 1);
        item->setEnabled(false);
        item->setToolTip(qs(planned.error().message));
      }
    }
    if (const auto hp = models::read_hparams(**file); hp && hp->n_ctx_train > 0) {
      context_->setMaximum(static_cast<int>(std::min<std::uint32_t>(hp->n_ctx_train, 1u << 20)));
    }
  }
  select(format_, kept);
  filling_ = was_filling;
  recommendation_.reset();
  use_recommended_->setEnabled(false);
  recommended_->setText(tr("Working out what suits this machine\u2026"));
  const models::RunConfig base = base_;
  watcher_.setFuture(QtConcurrent::run([name, base]() -> std::optional<models::Recommendation> {
    auto r = recommend_for(name, base);
    if (!r) return std::nullopt;
    return std::move(r).value();
  }));
}

void LoadOptionsDialog::reestimate() {
  if (filling_) return;
  for (QLayoutItem* item; (item = suggestion_box_->takeAt(0)) != nullptr;) {
    delete item->widget();
    delete item;
  }
  suggestions_.clear();
  const models::RunConfig c = config();
  const auto dp = models::plan_device(model().toStdString(), c);
  if (!dp) {
    fits_ = false;
    estimate_->clear();
    verdict_->setText(tr("Cannot load: %1").arg(qs(dp.error().describe())));
    verdict_->setProperty("error", true);
    load_->setEnabled(false);
    emit estimated(false);
    return;
  }
  const models::RunPlan& p = dp->plan;
  const std::size_t per_token = p.kv_block_bytes / static_cast<std::size_t>(std::max(1, c.kv_block_size));
  estimate_->setText(tr("Weights %1 (%2)  \u00b7  KV cache %3 (%4 blocks, %5 per token)  \u00b7  workspace %6\n"
                        "Total %7 of %8 free on %9 (%10)%11")
                         .arg(size_text(p.weights_bytes), qs(p.weight_format), size_text(p.kv_bytes))
                         .arg(p.kv_blocks)
                         .arg(size_text(per_token), size_text(p.workspace_bytes), size_text(p.total_bytes()),
                              size_text(dp->free_bytes), qs(dp->device), qs(dp->device_name),
                              dp->reason.empty() ? QString() : QStringLiteral("; ") + qs(dp->reason)));
  fits_ = p.total_bytes() <= dp->free_bytes;
  load_->setEnabled(true);
  load_->setText(fits_ ? tr("Load") : tr("Load anyway"));
  verdict_->setProperty("error", !fits_);
  if (fits_) {
    verdict_->setText(tr("Fits: %1 tokens of context.").arg(p.context_length));
  } else {
    verdict_->setText(tr("Does not fit: it needs %1, %2 has %3 free. These would fit:")
                          .arg(size_text(p.total_bytes()), qs(dp->device), size_text(dp->free_bytes)));
    const auto file = gguf::GgufFile::open(dp->path);
    if (file) suggestions_ = models::suggest_fits(**file, c, *dp);
    for (std::size_t i = 0; i < suggestions_.size(); ++i) {
      const models::FitSuggestion& s = suggestions_[i];
      auto* b = new QPushButton(tr("%1: %2 (%3)").arg(qs(s.option), qs(s.why), size_text(s.total_bytes)), this);
      b->setObjectName(QStringLiteral("loadSuggestion%1").arg(i));
      connect(b, &QPushButton::clicked, this, [this, i] { applySuggestion(static_cast<int>(i)); });
      suggestion_box_->addWidget(b);
    }
    if (suggestions_.empty()) verdict_->setText(verdict_->text() + QLatin1Char(' ') + tr("no single change does."));
  }
  verdict_->style()->unpolish(verdict_);
  verdict_->style()->polish(verdict_);
  emit estimated(fits_);
}

void LoadOptionsDialog::applySuggestion(int index) {
  if (index < 0 || index >= static_cast<int>(suggestions_.size())) return;
  const models::RunConfig c = suggestions_[static_cast<std::size_t>(index)].config;
  filling_ = true;
  select(device_, qs(c.device));
  select(format_, qs(c.quant));
  select(kv_, QString::fromLatin1(to_string(c.kv_precision)));
  if (c.context_length > 0) context_->setValue(c.context_length);
  filling_ = false;
  reestimate();
}

void LoadOptionsDialog::showRecommendation() {
  if (!recommendation_) {
    recommended_->setText(tr("No recommendation: the model could not be read."));
    return;
  }
  const models::Recommendation& r = *recommendation_;
  QString text = r.fits ? tr("Recommended for this machine: %1, %2 tokens, %3 KV cache.")
                              .arg(qs(r.config.device))
                              .arg(r.plan.context_length)
                              .arg(QString::fromLatin1(to_string(r.config.kv_precision)))
                        : tr("Nothing fits this machine as it is.");
  for (const std::string& why : r.reasons) text += QStringLiteral("\n\u2022 ") + qs(why);
  recommended_->setText(text);
  use_recommended_->setEnabled(r.fits);
  emit recommended();
}

void LoadOptionsDialog::useRecommended() {
  if (!recommendation_ || !recommendation_->fits) return;
  const models::Recommendation& r = *recommendation_;
  filling_ = true;
  select(device_, qs(r.config.device));
  select(kv_, QString::fromLatin1(to_string(r.config.kv_precision)));
  context_->setValue(r.plan.context_length);
  filling_ = false;
  base_.max_sequences = r.config.max_sequences;
  base_.max_batch_tokens = r.config.max_batch_tokens;
  reestimate();
}

}  // namespace hearth::app
