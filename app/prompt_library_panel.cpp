#include "app/prompt_library_panel.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "app/chat_controller.h"
#include "app/prompt_diff_view.h"
#include "app/rating_marks.h"
#include "app/storage_service.h"

namespace hearth::app {
namespace {

constexpr int kVersionRole = Qt::UserRole + 1;
constexpr int kVersionIdRole = Qt::UserRole + 2;

QPushButton* button(const QString& text, const char* name, QWidget* parent) {
  auto* b = new QPushButton(text, parent);
  b->setObjectName(QLatin1String(name));
  return b;
}

}  // namespace

PromptLibraryPanel::PromptLibraryPanel(StorageService* storage, ChatController* controller, QWidget* parent)
    : QWidget(parent),
      storage_(storage),
      controller_(controller),
      prompts_(new QStandardItemModel(this)),
      versions_(new QStandardItemModel(this)) {
  setObjectName(QStringLiteral("promptLibrary"));
  prompt_list_ = new QListView(this);
  prompt_list_->setObjectName(QStringLiteral("promptList"));
  prompt_list_->setModel(prompts_);
  prompt_list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  version_list_ = new QListView(this);
  version_list_->setObjectName(QStringLiteral("versionList"));
  version_list_->setModel(versions_);
  version_list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  name_ = new QLineEdit(this);
  name_->setObjectName(QStringLiteral("promptName"));
  name_->setPlaceholderText(tr("New prompt name"));
  text_ = new QPlainTextEdit(this);
  text_->setObjectName(QStringLiteral("promptText"));
  text_->setPlaceholderText(tr("System prompt; {{variables}} are filled in when it is used"));
  note_ = new QLineEdit(this);
  note_->setObjectName(QStringLiteral("promptNote"));
  note_->setPlaceholderText(tr("Note for this version (optional)"));
  label_ = new QLineEdit(this);
  label_->setObjectName(QStringLiteral("labelName"));
  label_->setPlaceholderText(tr("Label, e.g. production"));
  pinned_ = new QLabel(tr("No prompt pinned"), this);
  pinned_->setObjectName(QStringLiteral("pinnedPrompt"));
  metrics_ = new QLabel(this);
  metrics_->setObjectName(QStringLiteral("versionMetrics"));
  metrics_->setWordWrap(true);
  metrics_->setProperty("muted", true);
  auto* show_archived = new QCheckBox(tr("Show archived"), this);
  show_archived->setObjectName(QStringLiteral("showArchived"));

  auto* create = button(tr("Create"), "createPrompt", this);
  auto* save = button(tr("Save as new version"), "saveVersion", this);
  auto* label = button(tr("Set label"), "setLabel", this);
  auto* pin_version = button(tr("Pin this version"), "pinVersion", this);
  auto* pin_label = button(tr("Pin the label"), "pinLabel", this);
  auto* revert = button(tr("Revert to this"), "revertVersion", this);
  revert->setToolTip(tr("A new version with this version's text, note and settings"));
  auto* compare = button(tr("Compare…"), "compareVersions", this);
  compare->setToolTip(tr("Word diff of two versions, side by side"));
  archive_ = button(tr("Archive"), "archivePrompt", this);
  archive_->setToolTip(tr("Hide the prompt from the list; its versions and the answers that used them stay"));

  auto* layout = new QVBoxLayout(this);
  auto* create_row = new QHBoxLayout;
  create_row->addWidget(name_);
  create_row->addWidget(create);
  layout->addLayout(create_row);
  layout->addWidget(prompt_list_);
  auto* archive_row = new QHBoxLayout;
  archive_row->addWidget(show_archived);
  archive_row->addStretch(1);
  archive_row->addWidget(archive_);
  layout->addLayout(archive_row);
  layout->addWidget(version_list_);
  auto* version_row = new QHBoxLayout;
  version_row->addWidget(revert);
  version_row->addWidget(compare);
  layout->addLayout(version_row);
  layout->addWidget(metrics_);
  layout->addWidget(text_);
  layout->addWidget(note_);
  layout->addWidget(save);
  auto* label_row = new QHBoxLayout;
  label_row->addWidget(label_);
  label_row->addWidget(label);
  layout->addLayout(label_row);
  auto* pin_row = new QHBoxLayout;
  pin_row->addWidget(pin_version);
  pin_row->addWidget(pin_label);
  layout->addLayout(pin_row);
  layout->addWidget(pinned_);

  connect(create, &QPushButton::clicked, this, &PromptLibraryPanel::createPrompt);
  connect(save, &QPushButton::clicked, this, &PromptLibraryPanel::saveVersion);
  connect(label, &QPushButton::clicked, this, &PromptLibraryPanel::setLabel);
  connect(pin_version, &QPushButton::clicked, this, &PromptLibraryPanel::pinVersion);
  connect(pin_label, &QPushButton::clicked, this, &PromptLibraryPanel::pinLabel);
  connect(revert, &QPushButton::clicked, this, &PromptLibraryPanel::revertVersion);
  connect(compare, &QPushButton::clicked, this, [this] { compareVersions(); });
  connect(archive_, &QPushButton::clicked, this, &PromptLibraryPanel::toggleArchived);
  connect(show_archived, &QCheckBox::toggled, this, &PromptLibraryPanel::setShowArchived);
  connect(prompt_list_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& index) {
    archive_->setText(archived_[index.data().toString()] ? tr("Restore") : tr("Archive"));
    loadVersions(index.data().toString());
  });
  connect(version_list_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& i) {
    if (!i.isValid()) return;
    text_->setPlainText(i.data(Qt::ToolTipRole).toString());
    showMetrics(i.data(kVersionIdRole).toLongLong());
  });
  // A new answer changes the metrics of the version it used.
  connect(controller_, &ChatController::answerFinished, this, [this] {
    if (const qint64 id = version_list_->currentIndex().data(kVersionIdRole).toLongLong()) showMetrics(id);
  });
  connect(controller_, &ChatController::ratingChanged, this, [this] {
    if (const qint64 id = version_list_->currentIndex().data(kVersionIdRole).toLongLong()) showMetrics(id);
  });
  connect(controller_, &ChatController::promptPinned, this, [this](const QString& ref) {
    pinned_->setText(ref.isEmpty() ? tr("No prompt pinned") : tr("Pinned: %1").arg(ref));
  });
  reload();
}

QString PromptLibraryPanel::selectedPrompt() const {
  return prompt_list_->currentIndex().data().toString();
}

int PromptLibraryPanel::selectedVersion() const {
  return version_list_->currentIndex().data(kVersionRole).toInt();
}

void PromptLibraryPanel::reload() {
  storage_->run(
      this, tr("reading the prompt library"), [all = show_archived_](store::Store& s) { return s.list_prompts(all); },
      [this](std::vector<store::Prompt> prompts) {
        const QString keep = wanted_prompt_.isEmpty() ? selectedPrompt() : wanted_prompt_;
        prompts_->clear();
        archived_.clear();
        for (const auto& p : prompts) {
          const QString name = QString::fromStdString(p.name);
          auto* item = new QStandardItem(name);
          if (p.archived) item->setToolTip(tr("Archived"));
          if (p.archived) item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
          prompts_->appendRow(item);
          archived_[name] = p.archived;
        }
        const auto found = prompts_->findItems(keep);
        if (found.isEmpty()) versions_->clear();
        if (!found.isEmpty()) {
          prompt_list_->setCurrentIndex(found.front()->index());
          wanted_prompt_.clear();
        }
        emit promptsChanged();
      });
}

void PromptLibraryPanel::selectPrompt(const QString& name) {
  wanted_prompt_ = name;
  const auto found = prompts_->findItems(name);
  if (!found.isEmpty()) prompt_list_->setCurrentIndex(found.front()->index());
}

void PromptLibraryPanel::selectVersion(int version) {
  wanted_version_ = version;
  for (int row = 0; row < versions_->rowCount(); ++row) {
    if (versions_->item(row)->data(kVersionRole).toInt() == version) {
      version_list_->setCurrentIndex(versions_->index(row, 0));
    }
  }
}

void PromptLibraryPanel::loadVersions(const QString& name) {
  if (name.isEmpty()) return versions_->clear();
  storage_->run(
      this, tr("reading the versions of %1").arg(name),
      [n = name.toStdString()](store::Store& s) -> store::StoreResult<std::vector<Version>> {
        STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.find_prompt(n));
        STORE_ASSIGN_OR_RETURN(auto versions, s.list_prompt_versions(p.id));
        STORE_ASSIGN_OR_RETURN(const auto labels, s.list_prompt_labels(p.id));
        std::vector<Version> out;
        for (auto& v : versions) {
          Version row{std::move(v), {}};
          for (const auto& l : labels) {
            if (l.version_id == row.version.id) row.labels << QString::fromStdString(l.label);
          }
          out.push_back(std::move(row));
        }
        return out;
      },
      [this, name](std::vector<Version> versions) {
        if (name == selectedPrompt()) showVersions(versions);
      });
}

void PromptLibraryPanel::showVersions(const std::vector<Version>& versions) {
  versions_->clear();
  for (const auto& v : versions) {
    QString text = tr("Version %1").arg(v.version.version);
    if (!v.version.note.empty()) text += QStringLiteral(": ") + QString::fromStdString(v.version.note);
    if (!v.labels.isEmpty()) text += QStringLiteral(" [") + v.labels.join(QStringLiteral(", ")) + QLatin1Char(']');
    auto* item = new QStandardItem(text);
    item->setData(v.version.version, kVersionRole);
    item->setData(QVariant::fromValue(static_cast<qint64>(v.version.id)), kVersionIdRole);
    item->setData(QString::fromStdString(v.version.text), Qt::ToolTipRole);
    versions_->appendRow(item);
  }
  const int want = wanted_version_ ? wanted_version_ : (versions.empty() ? 0 : versions.back().version.version);
  wanted_version_ = 0;
  selectVersion(want);
}

void PromptLibraryPanel::createPrompt() {
  const QString name = name_->text().trimmed();
  if (name.isEmpty()) return;
  store::NewPromptVersion first{text_->toPlainText().toStdString(), note_->text().toStdString(), {}};
  storage_->run(
      this, tr("creating prompt %1").arg(name),
      [n = name.toStdString(), first](store::Store& s) { return s.add_prompt(n, first); },
      [this, name](store::PromptVersion) {
        name_->clear();
        note_->clear();
        wanted_prompt_ = name;
        reload();
      });
}

void PromptLibraryPanel::saveVersion() {
  const QString name = selectedPrompt();
  if (name.isEmpty()) return;
  store::NewPromptVersion next{text_->toPlainText().toStdString(), note_->text().toStdString(), {}};
  storage_->run(
      this, tr("saving a version of %1").arg(name),
      [n = name.toStdString(), next](store::Store& s) -> store::StoreResult<store::PromptVersion> {
        STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.find_prompt(n));
        return s.add_prompt_version(p.id, next);
      },
      [this, name](store::PromptVersion v) {
        note_->clear();
        wanted_version_ = v.version;
        loadVersions(name);
      });
}

void PromptLibraryPanel::setLabel() {
  const QString name = selectedPrompt(), label = label_->text().trimmed();
  const int version = selectedVersion();
  if (name.isEmpty() || label.isEmpty() || version == 0) return;
  storage_->run(
      this, tr("labelling %1 version %2").arg(name).arg(version),
      [n = name.toStdString(), l = label.toStdString(), version](store::Store& s) -> store::StoreResult<bool> {
        STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.find_prompt(n));
        STORE_ASSIGN_OR_RETURN(const store::PromptVersion v, s.find_prompt_version(p.id, version));
        STORE_TRY(s.set_prompt_label(p.id, l, v.id));
        return true;
      },
      [this, name, version](bool) {
        wanted_version_ = version;
        loadVersions(name);
      });
}

void PromptLibraryPanel::revertVersion() {
  const QString name = selectedPrompt();
  const int version = selectedVersion();
  if (name.isEmpty() || version == 0) return;
  storage_->run(
      this, tr("reverting %1 to version %2").arg(name).arg(version),
      [n = name.toStdString(), version](store::Store& s) -> store::StoreResult<store::PromptVersion> {
        STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.find_prompt(n));
        return s.revert_prompt(p.id, version);
      },
      [this, name](store::PromptVersion v) {
        wanted_version_ = v.version;
        loadVersions(name);
      });
}

void PromptLibraryPanel::toggleArchived() {
  const QString name = selectedPrompt();
  if (name.isEmpty()) return;
  const bool archive = !archived_[name];
  storage_->run(
      this, archive ? tr("archiving %1").arg(name) : tr("restoring %1").arg(name),
      [n = name.toStdString(), archive](store::Store& s) -> store::StoreResult<bool> {
        STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.find_prompt(n));
        STORE_TRY(s.set_prompt_archived(p.id, archive));
        return archive;
      },
      [this, name](bool) {
        if (show_archived_) wanted_prompt_ = name;
        reload();
      });
}

void PromptLibraryPanel::setShowArchived(bool show) {
  show_archived_ = show;
  reload();
}

PromptDiffView* PromptLibraryPanel::compareVersions(int old_version, int new_version) {
  const QString name = selectedPrompt();
  if (name.isEmpty()) return nullptr;
  auto* view = new PromptDiffView(storage_, name, this);
  view->setAttribute(Qt::WA_DeleteOnClose);
  if (old_version > 0 && new_version > 0) view->showVersions(old_version, new_version);
  view->show();
  return view;
}

void PromptLibraryPanel::showMetrics(qint64 version_id) {
  storage_->run(
      this, tr("measuring a prompt version"), [version_id](store::Store& s) { return s.version_metrics(version_id); },
      [this, version_id](store::VersionMetrics m) {
        if (version_list_->currentIndex().data(kVersionIdRole).toLongLong() != version_id) return;
        if (m.answers == 0) {
          metrics_->setText(tr("No answers with this version yet."));
        } else {
          QStringList finish;
          for (const auto& [reason, n] : m.finish_reasons) {
            finish << QStringLiteral("%1 %2").arg(QString::fromStdString(reason)).arg(n);
          }
          metrics_->setText(tr("%n answer(s) · median TTFT %1 ms · %2 tok/s · %3 tokens · %4 · %5 %6 %7 %8", nullptr,
                               static_cast<int>(m.answers))
                                .arg(m.median_ttft_ms, 0, 'f', 1)
                                .arg(m.median_decode_tok_s, 0, 'f', 1)
                                .arg(m.median_generated_tokens, 0, 'f', 0)
                                .arg(finish.join(QStringLiteral(", ")))
                                .arg(rated_up_mark())
                                .arg(m.rated_up)
                                .arg(rated_down_mark())
                                .arg(m.rated_down));
        }
        emit metricsShown(version_id);
      });
}

void PromptLibraryPanel::pinVersion() {
  if (selectedPrompt().isEmpty() || selectedVersion() == 0) return;
  controller_->pinPrompt(selectedPrompt() + QLatin1Char('@') + QString::number(selectedVersion()));
}

void PromptLibraryPanel::pinLabel() {
  if (selectedPrompt().isEmpty()) return;
  const QString label = label_->text().trimmed();
  controller_->pinPrompt(selectedPrompt() + QLatin1Char('@') + (label.isEmpty() ? QStringLiteral("latest") : label));
}

}  // namespace hearth::app
