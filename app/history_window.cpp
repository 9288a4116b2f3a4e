#include "app/history_window.h"

#include <QComboBox>
#include <QDateEdit>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "app/chat_controller.h"
#include "app/compare_view.h"
#include "app/experiment_window.h"
#include "app/history_model.h"
#include "app/rating_marks.h"
#include "app/rerun_dialog.h"
#include "app/storage_service.h"

namespace hearth::app {
namespace {

const QDate kAnyDate(2000, 1, 1);  // a date edit at its minimum means "no limit" (its special value text)

QDateEdit* date_edit(const char* name, QWidget* parent) {
  auto* d = new QDateEdit(parent);
  d->setObjectName(QLatin1String(name));
  d->setCalendarPopup(true);
  d->setMinimumDate(kAnyDate);
  d->setSpecialValueText(HistoryWindow::tr("any"));
  d->setDate(kAnyDate);
  d->setDisplayFormat(QStringLiteral("yyyy-MM-dd"));
  return d;
}

QComboBox* combo(const char* name, QWidget* parent) {
  auto* c = new QComboBox(parent);
  c->setObjectName(QLatin1String(name));
  c->addItem(HistoryWindow::tr("any"), QString());
  return c;
}

// Keeps the current choice when the items are replaced.
void refill(QComboBox* c, const std::vector<std::string>& values) {
  const QString keep = c->currentData().toString();
  c->blockSignals(true);
  while (c->count() > 1) c->removeItem(1);
  for (const auto& v : values) c->addItem(QString::fromStdString(v), QString::fromStdString(v));
  const int at = c->findData(keep);
  c->setCurrentIndex(at < 0 ? 0 : at);
  c->blockSignals(false);
}

// The prompt references the filter offers: every prompt, its versions, its labels.
struct Choices {
  store::HistoryFacets facets;
  std::vector<std::string> prompts;
};

}  // namespace

HistoryWindow::HistoryWindow(StorageService* storage, ChatController* controller, ChatBackend* backend, QWidget* parent)
    : QWidget(parent, Qt::Window),
      storage_(storage),
      controller_(controller),
      backend_(backend),
      model_(new HistoryModel(storage, this)) {
  setObjectName(QStringLiteral("historyWindow"));
  setWindowTitle(tr("Prompt history"));
  resize(1100, 600);
  buildFilters();
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("historyTable"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSortingEnabled(true);
  table_->horizontalHeader()->setSortIndicator(HistoryModel::kTime, Qt::DescendingOrder);
  table_->horizontalHeader()->setSectionResizeMode(HistoryModel::kText, QHeaderView::Stretch);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->verticalHeader()->hide();
  connect(table_, &QTableView::doubleClicked, this, [this] { openSelected(); });

  count_ = new QLabel(this);
  count_->setObjectName(QStringLiteral("historyCount"));
  auto* open = new QPushButton(tr("Open in conversation"), this);
  open->setObjectName(QStringLiteral("historyOpen"));
  auto* rerun = new QPushButton(tr("Re-run\u2026"), this);
  rerun->setObjectName(QStringLiteral("historyRerun"));
  auto* experiment = new QPushButton(tr("Experiment\u2026"), this);
  experiment->setObjectName(QStringLiteral("historyExperiment"));
  experiment->setToolTip(tr("Run the prompts this filter shows against two prompt versions"));
  experiment->setEnabled(backend_ != nullptr);
  connect(open, &QPushButton::clicked, this, &HistoryWindow::openSelected);
  connect(rerun, &QPushButton::clicked, this, &HistoryWindow::rerunSelected);
  connect(experiment, &QPushButton::clicked, this, &HistoryWindow::experimentWindow);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(count_, 1);
  buttons->addWidget(open);
  buttons->addWidget(rerun);
  buttons->addWidget(experiment);
  auto* layout = qobject_cast<QVBoxLayout*>(this->layout());
  layout->addWidget(table_, 1);
  layout->addLayout(buttons);

  connect(model_, &HistoryModel::loaded, this, [this] {
    count_->setText(tr("%n prompt(s)", nullptr, static_cast<int>(model_->total())) +
                    (model_->rowCount() < model_->total() ? tr(" (%1 loaded; scroll for more)").arg(model_->rowCount())
                                                          : QString()));
  });
  // A new answer (a send, a rerun) changes what the history shows.
  connect(controller_, &ChatController::answerFinished, this, [this] {
    if (isVisible()) refresh();
  });
  connect(model_, &HistoryModel::failed, this, [this](const QString& message) { count_->setText(message); });
  refresh();
}

void HistoryWindow::buildFilters() {
  auto* layout = new QVBoxLayout(this);
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("historySearch"));
  search_->setPlaceholderText(tr("Search the prompts (every word, as a prefix)"));
  search_->setClearButtonEnabled(true);
  model_filter_ = combo("historyModelFilter", this);
  quantization_ = combo("historyQuantization", this);
  finish_ = combo("historyFinish", this);
  prompt_ = new QComboBox(this);
  prompt_->setObjectName(QStringLiteral("historyPrompt"));
  prompt_->setEditable(true);
  prompt_->setInsertPolicy(QComboBox::NoInsert);
  prompt_->setToolTip(tr("NAME (any version), NAME@3 (a version) or NAME@production (a label)"));
  prompt_->lineEdit()->setPlaceholderText(tr("any prompt"));
  rating_ = new QComboBox(this);
  rating_->setObjectName(QStringLiteral("historyRating"));
  rating_->addItem(tr("any"), 99);
  rating_->addItem(rated_up_mark() + tr(" up"), static_cast<int>(store::Rating::kUp));
  rating_->addItem(rated_down_mark() + tr(" down"), static_cast<int>(store::Rating::kDown));
  rating_->addItem(tr("not rated"), static_cast<int>(store::Rating::kNone));
  since_ = date_edit("historySince", this);
  until_ = date_edit("historyUntil", this);

  auto* row1 = new QHBoxLayout;
  row1->addWidget(search_, 2);
  row1->addWidget(new QLabel(tr("Prompt"), this));
  row1->addWidget(prompt_, 1);
  auto* row2 = new QHBoxLayout;
  for (auto [label, w] : std::initializer_list<std::pair<QString, QWidget*>>{{tr("Model"), model_filter_},
                                                                             {tr("Quantization"), quantization_},
                                                                             {tr("Finish"), finish_},
                                                                             {tr("Rating"), rating_},
                                                                             {tr("From"), since_},
                                                                             {tr("to"), until_}}) {
    row2->addWidget(new QLabel(label, this));
    row2->addWidget(w);
  }
  row2->addStretch(1);
  layout->addLayout(row1);
  layout->addLayout(row2);

  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(200);
  connect(debounce_, &QTimer::timeout, this, &HistoryWindow::applyFilters);
  connect(search_, &QLineEdit::textChanged, debounce_, qOverload<>(&QTimer::start));
  connect(prompt_->lineEdit(), &QLineEdit::editingFinished, this, &HistoryWindow::applyFilters);
  connect(prompt_, &QComboBox::activated, this, &HistoryWindow::applyFilters);
  for (QComboBox* c : {model_filter_, quantization_, finish_, rating_}) {
    connect(c, &QComboBox::currentIndexChanged, this, &HistoryWindow::applyFilters);
  }
  for (QDateEdit* d : {since_, until_}) connect(d, &QDateEdit::dateChanged, this, &HistoryWindow::applyFilters);
}

void HistoryWindow::refresh() {
  loadChoices();
  applyFilters();
}

void HistoryWindow::loadChoices() {
  storage_->run(
      this, tr("reading the history's filters"),
      [](store::Store& s) -> store::StoreResult<Choices> {
        Choices out;
        STORE_ASSIGN_OR_RETURN(out.facets, s.history_facets());
        STORE_ASSIGN_OR_RETURN(const auto prompts, s.list_prompts(true));
        for (const auto& p : prompts) {
          out.prompts.push_back(p.name);
          for (int v = 1; v <= p.latest_version; ++v) out.prompts.push_back(p.name + "@" + std::to_string(v));
          STORE_ASSIGN_OR_RETURN(const auto labels, s.list_prompt_labels(p.id));
          for (const auto& l : labels) out.prompts.push_back(p.name + "@" + l.label);
        }
        return out;
      },
      [this](Choices choices) {
        refill(model_filter_, choices.facets.models);
        refill(quantization_, choices.facets.quantizations);
        refill(finish_, choices.facets.finish_reasons);
        const QString typed = prompt_->currentText();
        prompt_->blockSignals(true);
        prompt_->clear();
        prompt_->addItem(QString());
        for (const auto& p : choices.prompts) prompt_->addItem(QString::fromStdString(p));
        prompt_->setEditText(typed);
        prompt_->blockSignals(false);
      });
}

HistoryFilter HistoryWindow::currentFilter() const {
  HistoryFilter f;
  f.query.search = search_->text().toStdString();
  f.query.model = model_filter_->currentData().toString().toStdString();
  f.query.quantization = quantization_->currentData().toString().toStdString();
  f.query.finish_reason = finish_->currentData().toString().toStdString();
  if (const int r = rating_->currentData().toInt(); r != 99) f.query.rating = static_cast<store::Rating>(r);
  // Dates are local days: from the start of `since` to the end of `until`.
  if (since_->date() != kAnyDate) f.query.since_ms = since_->date().startOfDay().toMSecsSinceEpoch();
  if (until_->date() != kAnyDate) f.query.until_ms = until_->date().addDays(1).startOfDay().toMSecsSinceEpoch();
  f.prompt = prompt_->currentText().trimmed();
  return f;
}

void HistoryWindow::applyFilters() {
  debounce_->stop();
  HistoryFilter f = currentFilter();
  f.query.sort = model_->filter().query.sort;
  f.query.descending = model_->filter().query.descending;
  model_->setFilter(f);
}

qint64 HistoryWindow::selectedMessage() const {
  const QModelIndex i = table_->currentIndex();
  return i.isValid() ? i.data(HistoryModel::kMessageIdRole).toLongLong() : 0;
}

void HistoryWindow::openSelected() {
  const QModelIndex i = table_->currentIndex();
  if (!i.isValid()) return;
  emit openRequested(i.data(HistoryModel::kConversationIdRole).toLongLong(),
                     i.data(HistoryModel::kMessageIdRole).toLongLong());
}

void HistoryWindow::rerunSelected() {
  const store::HistoryEntry* e = model_->entry(table_->currentIndex().row());
  if (!e) return;
  auto* dialog = new RerunDialog(storage_, *e, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &RerunDialog::runRequested, this,
          [this](qint64 message_id, const QString& prompt, const conversation::SamplingOverrides& overrides) {
            auto* compare = new CompareView(storage_, this);
            compare->setAttribute(Qt::WA_DeleteOnClose);
            compare->followRerun(controller_);
            compare->show();
            controller_->rerun(message_id, prompt, overrides);
          });
  dialog->show();
}

void HistoryWindow::experimentWindow() {
  if (!backend_) return;
  auto* w = new ExperimentWindow(storage_, backend_, model_->resolvedQuery(), this);
  w->setAttribute(Qt::WA_DeleteOnClose);
  w->show();
}

}  // namespace hearth::app
