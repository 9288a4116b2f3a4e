#include "app/prompt_diff_view.h"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

#include "app/diff_html.h"
#include "app/storage_service.h"

namespace hearth::app {
PromptDiffView::PromptDiffView(StorageService* storage, const QString& prompt, QWidget* parent)
    : QWidget(parent, Qt::Window), storage_(storage), prompt_(prompt) {
  setObjectName(QStringLiteral("promptDiffView"));
  setWindowTitle(tr("%1: compare versions").arg(prompt));
  resize(900, 500);
  old_ = new QComboBox(this);
  old_->setObjectName(QStringLiteral("diffOldVersion"));
  new_ = new QComboBox(this);
  new_->setObjectName(QStringLiteral("diffNewVersion"));
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("diffSummary"));
  old_text_ = new QTextBrowser(this);
  old_text_->setObjectName(QStringLiteral("diffOldText"));
  new_text_ = new QTextBrowser(this);
  new_text_->setObjectName(QStringLiteral("diffNewText"));
  auto* grid = new QGridLayout;
  grid->addWidget(old_, 0, 0);
  grid->addWidget(new_, 0, 1);
  grid->addWidget(old_text_, 1, 0);
  grid->addWidget(new_text_, 1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(grid, 1);
  layout->addWidget(summary_);
  for (QComboBox* c : {old_, new_}) connect(c, &QComboBox::currentIndexChanged, this, &PromptDiffView::diffChosen);

  storage_->run(
      this, tr("reading the versions of %1").arg(prompt),
      [name = prompt.toStdString()](store::Store& s) -> store::StoreResult<std::vector<store::PromptVersion>> {
        STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.find_prompt(name));
        return s.list_prompt_versions(p.id);
      },
      [this](std::vector<store::PromptVersion> versions) {
        for (QComboBox* c : {old_, new_}) {
          c->blockSignals(true);
          for (const auto& v : versions) {
            QString label = tr("Version %1").arg(v.version);
            if (!v.note.empty()) label += QStringLiteral(": ") + QString::fromStdString(v.note);
            c->addItem(label, QVariant::fromValue(static_cast<qint64>(v.id)));
            c->setItemData(c->count() - 1, v.version, Qt::UserRole + 1);
          }
          c->blockSignals(false);
        }
        const int last = static_cast<int>(versions.size()) - 1;
        old_->setCurrentIndex(std::max(last - 1, 0));
        new_->setCurrentIndex(std::max(last, 0));
        if (want_old_ > 0) return showVersions(want_old_, want_new_);
        diffChosen();
      });
}

void PromptDiffView::showVersions(int old_version, int new_version) {
  want_old_ = old_version;
  want_new_ = new_version;
  const int a = old_->findData(old_version, Qt::UserRole + 1), b = new_->findData(new_version, Qt::UserRole + 1);
  if (a < 0 || b < 0) return;  // not listed yet: done when they are
  old_->blockSignals(true);
  old_->setCurrentIndex(a);
  old_->blockSignals(false);
  new_->setCurrentIndex(b);
  diffChosen();
}

void PromptDiffView::diffChosen() {
  const qint64 a = old_->currentData().toLongLong(), b = new_->currentData().toLongLong();
  if (a == 0 || b == 0) return;
  ready_ = false;
  storage_->run(
      this, tr("comparing two versions"), [a, b](store::Store& s) { return s.diff_prompt_versions(a, b); },
      [this, a, b](std::vector<store::DiffOp> ops) {
        if (old_->currentData().toLongLong() != a || new_->currentData().toLongLong() != b) return;  // changed since
        const DiffHtml html = side_by_side_html(ops);
        old_text_->setHtml(html.old_html);
        new_text_->setHtml(html.new_html);
        deleted_ = html.deleted_words;
        inserted_ = html.inserted_words;
        summary_->setText(tr("%1 word(s) deleted, %2 inserted").arg(deleted_).arg(inserted_));
        ready_ = true;
        emit diffShown();
      });
}

QString PromptDiffView::oldHtml() const {
  return old_text_->toHtml();
}
QString PromptDiffView::newHtml() const {
  return new_text_->toHtml();
}

}  // namespace hearth::app
