#include "app/rerun_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "app/storage_service.h"

namespace hearth::app {

RerunDialog::RerunDialog(StorageService* storage, const store::HistoryEntry& entry, QWidget* parent)
    : QDialog(parent), message_id_(entry.message_id) {
  setObjectName(QStringLiteral("rerunDialog"));
  setWindowTitle(tr("Re-run a prompt"));
  auto* text = new QLabel(QString::fromStdString(entry.text).left(400), this);
  text->setWordWrap(true);
  text->setProperty("muted", true);
  prompt_ = new QComboBox(this);
  prompt_->setObjectName(QStringLiteral("rerunPrompt"));
  prompt_->setEditable(true);
  prompt_->setInsertPolicy(QComboBox::NoInsert);
  prompt_->lineEdit()->setPlaceholderText(tr("as before"));
  prompt_->addItem(QString());
  set_temperature_ = new QCheckBox(tr("Temperature"), this);
  set_temperature_->setObjectName(QStringLiteral("rerunSetTemperature"));
  temperature_ = new QDoubleSpinBox(this);
  temperature_->setObjectName(QStringLiteral("rerunTemperature"));
  temperature_->setRange(0, 2);
  temperature_->setSingleStep(0.1);
  temperature_->setValue(entry.generation ? entry.generation->sampling.temperature : 0.7);
  new_seed_ = new QCheckBox(tr("Seed (0: a new one)"), this);
  new_seed_->setObjectName(QStringLiteral("rerunSetSeed"));
  seed_ = new QSpinBox(this);
  seed_->setObjectName(QStringLiteral("rerunSeed"));
  seed_->setRange(0, 2147483647);
  auto* form = new QFormLayout;
  form->addRow(tr("Prompt version"), prompt_);
  form->addRow(set_temperature_, temperature_);
  form->addRow(new_seed_, seed_);
  auto* note = new QLabel(tr("Unset values are those of the earlier answer; the model is the one loaded now. The new "
                             "answer is another version of the old one (\u2039 \u203a in the chat)."),
                          this);
  note->setWordWrap(true);
  note->setProperty("muted", true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  QPushButton* run = buttons->addButton(tr("Re-run"), QDialogButtonBox::AcceptRole);
  run->setObjectName(QStringLiteral("rerunRun"));
  connect(buttons, &QDialogButtonBox::accepted, this, &RerunDialog::run);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(text);
  layout->addLayout(form);
  layout->addWidget(note);
  layout->addWidget(buttons);

  storage->run(
      this, tr("reading the prompt library"),
      [](store::Store& s) -> store::StoreResult<std::vector<std::string>> {
        std::vector<std::string> refs;
        STORE_ASSIGN_OR_RETURN(const auto prompts, s.list_prompts(false));
        for (const auto& p : prompts) {
          for (int v = 1; v <= p.latest_version; ++v) refs.push_back(p.name + "@" + std::to_string(v));
          STORE_ASSIGN_OR_RETURN(const auto labels, s.list_prompt_labels(p.id));
          for (const auto& l : labels) refs.push_back(p.name + "@" + l.label);
        }
        return refs;
      },
      [this](std::vector<std::string> refs) {
        const QString typed = prompt_->currentText();
        for (const auto& r : refs) prompt_->addItem(QString::fromStdString(r));
        prompt_->setEditText(typed);
      });
}

QString RerunDialog::prompt() const {
  return prompt_->currentText().trimmed();
}

conversation::SamplingOverrides RerunDialog::overrides() const {
  conversation::SamplingOverrides o;
  if (set_temperature_->isChecked()) o.temperature = static_cast<float>(temperature_->value());
  if (new_seed_->isChecked()) o.seed = static_cast<std::uint64_t>(seed_->value());
  return o;
}

void RerunDialog::run() {
  emit runRequested(message_id_, prompt(), overrides());
  accept();
}

}  // namespace hearth::app
