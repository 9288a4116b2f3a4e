#include "app/compare_view.h"

#include <QGridLayout>
#include <QLabel>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "app/chat_controller.h"
#include "app/diff_html.h"
#include "app/engine_types.h"
#include "app/storage_service.h"
#include "store/word_diff.h"

namespace hearth::app {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

CompareView::CompareView(StorageService* storage, QWidget* parent) : QWidget(parent, Qt::Window), storage_(storage) {
  setObjectName(QStringLiteral("compareView"));
  setWindowTitle(tr("Compare answers"));
  resize(1000, 600);
  status_ = new QLabel(tr("Waiting for the new answer\u2026"), this);
  status_->setObjectName(QStringLiteral("compareStatus"));
  const auto column = [this](const QString& title, const char* params, const char* text, QLabel*& p, QTextBrowser*& t) {
    auto* box = new QVBoxLayout;
    auto* heading = new QLabel(QStringLiteral("<b>%1</b>").arg(title), this);
    p = new QLabel(this);
    p->setObjectName(QLatin1String(params));
    p->setTextInteractionFlags(Qt::TextSelectableByMouse);
    p->setWordWrap(true);
    t = new QTextBrowser(this);
    t->setObjectName(QLatin1String(text));
    box->addWidget(heading);
    box->addWidget(p);
    box->addWidget(t, 1);
    return box;
  };
  auto* sides = new QGridLayout;
  sides->addLayout(column(tr("Before"), "compareOldParameters", "compareOldText", old_params_, old_text_), 0, 0);
  sides->addLayout(column(tr("Re-run"), "compareNewParameters", "compareNewText", new_params_, new_text_), 0, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(status_);
  layout->addLayout(sides, 1);
}

void CompareView::followRerun(ChatController* controller) {
  connect(
      controller, &ChatController::rerunStarted, this,
      [this, controller](qint64 previous, qint64 answer) {
        old_id_ = previous;
        new_id_ = answer;
        connect(controller, &ChatController::answerFinished, this, [this, answer](const GenerationDone& done) {
          if (done.tag == answer && !ready_) compare(old_id_, answer);
        });
      },
      Qt::SingleShotConnection);
}

void CompareView::compare(qint64 old_answer_id, qint64 new_answer_id) {
  old_id_ = old_answer_id;
  new_id_ = new_answer_id;
  status_->setText(tr("Reading the answers\u2026"));
  const auto load = [](store::Store& s, store::Id id) -> store::StoreResult<Side> {
    Side side;
    if (id == 0) return side;  // the prompt had no answer before
    STORE_ASSIGN_OR_RETURN(side.message, s.get_message(id));
    STORE_ASSIGN_OR_RETURN(side.generation, s.get_generation(id));
    if (side.generation && side.generation->prompt_version_id) {
      STORE_ASSIGN_OR_RETURN(const store::PromptVersion v, s.get_prompt_version(*side.generation->prompt_version_id));
      STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.get_prompt(v.prompt_id));
      side.prompt = p.name + "@" + std::to_string(v.version);
    }
    return side;
  };
  storage_->run(
      this, tr("reading two answers"),
      [load, old_answer_id, new_answer_id](store::Store& s) -> store::StoreResult<std::pair<Side, Side>> {
        STORE_ASSIGN_OR_RETURN(Side a, load(s, old_answer_id));
        STORE_ASSIGN_OR_RETURN(Side b, load(s, new_answer_id));
        return std::pair<Side, Side>{std::move(a), std::move(b)};
      },
      [this](std::pair<Side, Side> sides) { display(sides.first, sides.second); });
}

QString CompareView::parameters(const Side& side) {
  if (side.message.id == 0) return tr("(no earlier answer)");
  const auto& g = side.generation;
  if (!g) return tr("(no generation record)");
  const auto& s = g->sampling;
  return tr("prompt %1 · model %2 · %3 · KV %4 · %5<br>temperature %6 · top-p %7 · top-k %8 · min-p %9 · seed %10 · "
            "max tokens %11<br><b>%12</b> prompt tokens (%13 cached) · <b>%14</b> generated · TTFT <b>%15 ms</b> · "
            "<b>%16 tok/s</b> · finish %17")
      .arg(side.prompt.empty() ? tr("none") : qs(side.prompt), qs(g->model_name), qs(g->quantization),
           qs(g->kv_precision), qs(g->device))
      .arg(s.temperature, 0, 'f', 2)
      .arg(s.top_p, 0, 'f', 2)
      .arg(s.top_k)
      .arg(s.min_p, 0, 'f', 2)
      .arg(s.seed)
      .arg(g->max_tokens)
      .arg(g->prompt_tokens)
      .arg(g->cached_tokens)
      .arg(g->generated_tokens)
      .arg(g->ttft_ms, 0, 'f', 1)
      .arg(g->decode_tok_s, 0, 'f', 1)
      .arg(qs(g->finish_reason));
}

void CompareView::display(const Side& a, const Side& b) {
  old_plain_ = qs(a.message.content);
  new_plain_ = qs(b.message.content);
  const DiffHtml diff = side_by_side_html(store::word_diff(a.message.content, b.message.content));
  changed_words_ = diff.deleted_words + diff.inserted_words;
  old_text_->setHtml(diff.old_html);
  new_text_->setHtml(diff.new_html);
  old_params_->setText(parameters(a));
  new_params_->setText(parameters(b));
  status_->setText(changed_words_ == 0
                       ? tr("The two answers are the same.")
                       : tr("%1 word(s) deleted, %2 inserted.").arg(diff.deleted_words).arg(diff.inserted_words));
  ready_ = true;
  emit compared();
}

QString CompareView::oldText() const {
  return old_plain_;
}
QString CompareView::newText() const {
  return new_plain_;
}
QString CompareView::oldParameters() const {
  return old_params_->text();
}
QString CompareView::newParameters() const {
  return new_params_->text();
}

}  // namespace hearth::app
